package lds

import (
	"errors"
	"testing"

	"github.com/idstream/idstream/internal/lds/ldstest"
)

// The fuzz targets check that no input makes a parser panic, that every error is one of the
// package's classes, and that what is returned is bounded by the input (no amplification).
// Seed corpora live in testdata/fuzz/<target>; the seeds added here are the valid forms.

func FuzzParseDG1(f *testing.F) {
	f.Add(ldstest.DG1(ldstest.SampleMRZ()))
	f.Add(ldstest.DG1([]string{"P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseDG1(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		n := 0
		for _, l := range m.Lines {
			n += len(l)
		}
		if n > len(b) {
			t.Fatalf("%d MRZ characters from %d bytes", n, len(b))
		}
		_ = m.Fields()
	})
}

func FuzzParseDG2(f *testing.F) {
	f.Add(ldstest.DG2(ldstest.JPEG(8, 8)))
	f.Add(ldstest.DG2([]byte("\x00\x00\x00\x0CjP  \r\n\x87\n")))
	f.Add(ldstest.DG2([]byte("\xFF\x4F\xFF\x51\x00\x29")))
	f.Fuzz(func(t *testing.T, b []byte) {
		face, err := ParseDG2(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		switch face.MediaType {
		case MediaTypeJPEG, MediaTypeJP2, MediaTypeJ2C:
		default:
			t.Fatalf("media type %q", face.MediaType)
		}
		if len(face.Data) == 0 || len(face.Data) > len(b) || face.Images < 1 {
			t.Fatalf("%d image bytes, %d images from %d bytes", len(face.Data), face.Images, len(b))
		}
		if _, _, err := j2kSize(face.Data); err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("j2kSize: unexpected error class: %v", err)
		}
	})
}

func FuzzParseDG13(f *testing.F) {
	f.Add(ldstest.DG13(ldstest.SampleDG13Fields()))
	f.Add(ldstest.DG13(map[int]string{1: "001099012345", 4: "Nữ", 13: "A", 99: "x"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseDG13(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		// Text grows at most 3/2 (a two-byte BMP character becomes up to three UTF-8 bytes),
		// plus the "; " joins.
		n := 0
		for _, f := range v.Fields() {
			n += len(f.Value)
		}
		for _, s := range v.Other {
			n += len(s)
		}
		if n > 3*len(b) {
			t.Fatalf("%d bytes of text from %d bytes", n, len(b))
		}
	})
}

func FuzzParseDG14(f *testing.F) {
	f.Add(ldstest.DG14([]int{0, 4, 0, 127, 0, 7, 1, 1, 4, 1, 3}))
	f.Fuzz(func(t *testing.T, b []byte) {
		si, err := ParseDG14(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		if len(si.ChipAuthentication)+len(si.Other) > len(b) {
			t.Fatalf("%d infos from %d bytes", len(si.ChipAuthentication)+len(si.Other), len(b))
		}
	})
}
