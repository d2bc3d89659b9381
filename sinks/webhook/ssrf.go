package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// ErrRefusedTarget is wrapped by the error of an attempt whose target is not allowed: a
// scheme other than http/https, or (for a tenant that does not allow private webhooks) an
// address that is private, loopback, link-local, multicast, unspecified, CGNAT or otherwise
// not publicly routable. Such a delivery is not retried.
var ErrRefusedTarget = errors.New("webhook target refused")

// blockedPrefixes are the ranges refused besides what netip classifies (private, loopback,
// link-local, multicast, unspecified).
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // CGNAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and 255.255.255.255 broadcast
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64: would reach IPv4 space
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2002::/16"),      // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("::ffff:0:0/96"),  // IPv4-mapped (checked again unmapped)
	netip.MustParsePrefix("::/128"),         // unspecified
	netip.MustParsePrefix("::1/128"),        // loopback
	netip.MustParsePrefix("fc00::/7"),       // unique local
	netip.MustParsePrefix("fe80::/10"),      // link-local
	netip.MustParsePrefix("ff00::/8"),       // multicast
	netip.MustParsePrefix("169.254.0.0/16"), // link-local (cloud metadata)
	netip.MustParsePrefix("224.0.0.0/4"),    // multicast
	netip.MustParsePrefix("127.0.0.0/8"),    // loopback
	netip.MustParsePrefix("10.0.0.0/8"),     // private
	netip.MustParsePrefix("172.16.0.0/12"),  // private
	netip.MustParsePrefix("192.168.0.0/16"), // private
}

// PublicAddr reports whether addr is a publicly routable unicast address, the only kind a
// tenant without allow_private_webhooks may be delivered to.
func PublicAddr(addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	if addr.Is4In6() {
		if !PublicAddr(addr.Unmap()) {
			return false
		}
	}
	a := addr.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// publicOnlyControl is a net.Dialer Control function: it runs after name resolution, on the
// address actually connected to, so DNS answers (and DNS rebinding) cannot bypass it.
func publicOnlyControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address", ErrRefusedTarget)
	}
	if !PublicAddr(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address", ErrRefusedTarget, ap.Addr())
	}
	return nil
}
