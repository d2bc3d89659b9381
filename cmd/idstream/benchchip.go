package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	"github.com/idstream/idstream/internal/mrtd/mrtdtest"
	"github.com/idstream/idstream/internal/registry"
	"github.com/idstream/idstream/processors/chip/chiptest"
)

// runChipPKI is `idstream chip-pki DIR`: it writes a development CSCA and document signer
// under DIR, unless one is there already: DIR/csca/csca.pem for a service's --csca-dir, and
// DIR/signer.pem (the document signer's certificate and key, mode 0600) for `idstream bench
// --flow chip_id_card --chip-pki DIR`, which signs each session's chip with it. It is for
// load tests and for trying the nfc step by hand: a service trusts it only when told to, and
// no production service ever should.
func runChipPKI(args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("chip-pki", flag.ContinueOnError)
	if err := parse(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 1 {
		return fmt.Errorf("%w: chip-pki DIR", errUsage)
	}
	dir := flags.Arg(0)
	_, err := mrtdtest.LoadSigner(dir)
	if err == nil {
		fmt.Fprintf(stdout, "a development PKI is already in %s: trust %s\n", dir, filepath.Join(dir, mrtdtest.SignerCSCADir))
		return nil
	}
	for _, f := range []string{mrtdtest.SignerFile, mrtdtest.SignerCSCADir} {
		if _, serr := os.Stat(filepath.Join(dir, f)); !errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("%s holds a PKI that cannot be used (remove it to make a new one): %w", dir, err)
		}
	}
	pki, err := mrtdtest.NewPKI(mrtdtest.ECDSAP256)
	if err != nil {
		return err
	}
	if err := pki.SaveSigner(dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "development PKI written to %s: start the service with --csca-dir %s\n", dir, filepath.Join(dir, mrtdtest.SignerCSCADir))
	return nil
}

// benchChips signs the chip of each chip_id_card session of `idstream bench`: the sandbox
// persona whose registry record matches ("match"), its DG2 the session's selfie (so the chip
// and the selfie are one person), signed by the document signer of a development PKI
// (idstream chip-pki). The document photos are another person's: the bench measures load,
// not accuracy. Safe for concurrent use.
type benchChips struct {
	pki     *mrtdtest.PKI
	persona registry.Persona
}

// newBenchChips loads the document signer under dir.
func newBenchChips(dir string) (*benchChips, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: --flow chip_id_card needs --chip-pki DIR (idstream chip-pki DIR makes one; the service must trust DIR/%s)", errUsage, mrtdtest.SignerCSCADir)
	}
	pki, err := mrtdtest.LoadSigner(dir)
	if err != nil {
		return nil, fmt.Errorf("--chip-pki: %w", err)
	}
	persona, ok := chiptest.PersonaByKey("match")
	if !ok {
		return nil, errors.New("no sandbox persona \"match\" to sign chips for")
	}
	return &benchChips{pki: pki, persona: persona}, nil
}

// body returns the nfc step's JSON body of a chip holding face (JPEG) that answers nonce
// (base64, as Session Init gives it).
func (b *benchChips) body(face []byte, nonceB64 string) (map[string]string, error) {
	nonce, err := base64.StdEncoding.DecodeString(nonceB64)
	if err != nil {
		return nil, fmt.Errorf("session nonce: %w", err)
	}
	files, err := chiptest.Build(b.pki, b.persona, nonce, chiptest.WithFace(face))
	if err != nil {
		return nil, err
	}
	body := make(map[string]string, len(files))
	for name, data := range files {
		body[name] = base64.StdEncoding.EncodeToString(data)
	}
	return body, nil
}

// sendChip posts a session's nfc step: a chip signed for its nonce (o.chips), holding the
// session's selfie as its photo. It takes send, benchSession's way of waiting out 429s.
func sendChip(ctx context.Context, cl *evalClient, o benchOptions, c benchCase, sessionID, token, nonce string, send func(func() (edgeAnswer, error)) (edgeAnswer, error)) error {
	if o.chips == nil {
		return errors.New("the flow has an nfc step: bench it as --flow chip_id_card")
	}
	f, ok := cl.corpus.Face(c.selfie)
	if !ok {
		return fmt.Errorf("no face %q", c.selfie)
	}
	face, err := cl.corpus.Read(f.Image)
	if err != nil {
		return err
	}
	body, err := o.chips.body(face, nonce)
	if err != nil {
		return fmt.Errorf("chip: %w", err)
	}
	res, err := send(func() (edgeAnswer, error) {
		return cl.do(ctx, http.MethodPost, "/v1/ekyc/sessions/"+sessionID+"/nfc", token, body)
	})
	if err == nil && res.status != http.StatusAccepted {
		err = fmt.Errorf("HTTP %d: %.200s", res.status, res.body)
	}
	if err != nil {
		return fmt.Errorf("upload nfc: %w", err)
	}
	return nil
}
