package quality

import (
	"image"
	"slices"
	"strings"
	"testing"

	"github.com/idstream/idstream/internal/cardrender"
)

// photo returns a 1600×1200 JPEG of the vehicle registration card (or of the bare surface
// when doc is false) placed on a dark surface as s says.
func photo(t *testing.T, doc bool, s cardrender.Scene) []byte {
	t.Helper()
	var card image.Image
	if doc {
		r, err := cardrender.New()
		if err != nil {
			t.Skipf("fonts for the card renderer: %v", err)
		}
		card, _ = r.VehicleRegistration(cardrender.SyntheticVehicle(2))
	}
	s.Width, s.Height, s.Background, s.NoiseStdDev = 1600, 1200, cardrender.DarkSmooth, 3
	img, _, err := cardrender.Place(card, s, 5)
	if err != nil {
		t.Fatal(err)
	}
	return encodeJPEG(t, img)
}

// Document framing reaches the event: a card in the frame passes; cut off it is not_framed;
// a picture with no document is no_document. Framing never applies to a selfie.
func TestDocumentFraming(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name, step string
		data       []byte
		framing    string
		reasons    []string
	}{
		{"framed", "document_front", photo(t, true, cardrender.Scene{CenterX: 0.5, CenterY: 0.5, Scale: 0.75, RotationDeg: 4, Skew: 0.02}), "ok", []string{}},
		{"cut off", "document_back", photo(t, true, cardrender.Scene{CenterX: 0.8, CenterY: 0.5, Scale: 0.7}), "not_framed", []string{"not_framed"}},
		{"far", "passport", photo(t, true, cardrender.Scene{CenterX: 0.5, CenterY: 0.5, Scale: 0.3}), "not_framed", []string{"not_framed"}},
		{"no document", "document_front", photo(t, false, cardrender.Scene{}), "not_framed", []string{"blurry", "no_document"}},
	} {
		rec, _ := f.capture(t, "cap_"+strings.ReplaceAll(c.name, " ", "_"), c.step, c.data)
		qa := f.assessed(t, rec)
		if qa.Passed != (len(c.reasons) == 0) || qa.Framing != c.framing || !slices.Equal(qa.Reasons, c.reasons) {
			t.Errorf("%s: passed %v framing %q reasons %v, want framing %q reasons %v", c.name, qa.Passed, qa.Framing, qa.Reasons, c.framing, c.reasons)
		}
	}
}
