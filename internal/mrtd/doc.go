// Package mrtd implements the cryptography of ICAO 9303 eMRTD chips (passports and chip ID
// cards such as the Vietnamese CCCD): decoding EF.SOD (a CMS SignedData carrying the
// LDSSecurityObject), passive authentication (Document Signer signature, DS → CSCA chain
// checked at verification time, every data-group hash, no data group outside the SOD),
// CSCA trust anchors from certificates and ICAO CSCA master lists, and active authentication
// (RSA ISO/IEC 9796-2 scheme 1 and ECDSA) with the DG15 public key.
//
// Parsing of data-group contents (DG1 MRZ, DG2 face, DG13, DG14) lives in internal/lds;
// BER-TLV handling in internal/tlv. The package has no Kafka or I/O beyond LoadTrust reading
// the configured directory. Certificates are checked with crypto/x509 primitives directly;
// every expired, untrusted or unsupported case is a reported failure, never accepted.
//
// Limitations: brainpool curves (and other curves crypto/ecdsa lacks) are reported as
// unsupported; crypto/x509 rejects certificates with negative serial numbers.
package mrtd
