package imagecheck

import (
	"errors"
	"testing"
)

// FuzzInspect checks that no input makes Inspect panic, that every error is one of the
// package's four, and that an accepted image respects the limits. Seeds live in
// testdata/fuzz/FuzzInspect; small limits keep each run cheap.
func FuzzInspect(f *testing.F) {
	f.Add([]byte{})
	f.Add(encodeJPEG(f))
	f.Add(encodePNG(f))
	f.Add(pngBomb(100000, 100000))
	lim := Limits{MaxWidth: 512, MaxHeight: 512, MaxPixels: 512 * 256, MaxBytes: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := Inspect(data, lim)
		if err != nil {
			if !errors.Is(err, ErrEmpty) && !errors.Is(err, ErrUnsupportedFormat) &&
				!errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		if info.Format != FormatJPEG && info.Format != FormatPNG {
			t.Fatalf("accepted format %q", info.Format)
		}
		if info.Width <= 0 || info.Height <= 0 || info.Width > lim.MaxWidth || info.Height > lim.MaxHeight ||
			info.Width*info.Height > lim.MaxPixels {
			t.Fatalf("accepted %dx%d beyond %+v", info.Width, info.Height, lim)
		}
	})
}
