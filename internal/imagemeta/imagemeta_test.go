package imagemeta

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
	"image/png"
	"testing"
)

// WithEXIF returns a JPEG with an EXIF APP1 segment holding the given IFD0 ASCII tags.
func withEXIF(t testing.TB, tags map[uint16]string, bo binary.ByteOrder) []byte {
	t.Helper()
	var img bytes.Buffer
	if err := jpeg.Encode(&img, image.NewGray(image.Rect(0, 0, 8, 8)), nil); err != nil {
		t.Fatal(err)
	}
	var tiff bytes.Buffer
	if bo == binary.LittleEndian {
		tiff.WriteString("II")
	} else {
		tiff.WriteString("MM")
	}
	_ = binary.Write(&tiff, bo, uint16(42))
	_ = binary.Write(&tiff, bo, uint32(8))
	keys := []uint16{tagMake, tagModel, tagSoftware}
	var present []uint16
	for _, k := range keys {
		if _, ok := tags[k]; ok {
			present = append(present, k)
		}
	}
	_ = binary.Write(&tiff, bo, uint16(len(present)))
	dataOff := 8 + 2 + 12*len(present) + 4
	var data bytes.Buffer
	for _, k := range present {
		v := tags[k] + "\x00"
		_ = binary.Write(&tiff, bo, k)
		_ = binary.Write(&tiff, bo, uint16(2))
		_ = binary.Write(&tiff, bo, uint32(len(v)))
		if len(v) <= 4 {
			b := make([]byte, 4)
			copy(b, v)
			tiff.Write(b)
		} else {
			_ = binary.Write(&tiff, bo, uint32(dataOff+data.Len()))
			data.WriteString(v)
		}
	}
	_ = binary.Write(&tiff, bo, uint32(0))
	tiff.Write(data.Bytes())
	seg := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	out := []byte{0xFF, 0xD8, 0xFF, 0xE1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}
	out = append(out, seg...)
	return append(out, img.Bytes()[2:]...)
}

func TestReadJPEGWithEXIF(t *testing.T) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		data := withEXIF(t, map[uint16]string{tagMake: "samsung", tagModel: "SM-A536E", tagSoftware: "Adobe Photoshop 25.0"}, bo)
		m := Read(data)
		if m.Format != FormatJPEG || !m.HasEXIF || m.Make != "samsung" || m.Model != "SM-A536E" || m.Software != "Adobe Photoshop 25.0" {
			t.Fatalf("%v: %+v", bo, m)
		}
		if e := EditedBy(m, DefaultEditors()); e != "photoshop" {
			t.Fatalf("EditedBy = %q", e)
		}
		if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
			t.Fatalf("test JPEG does not decode: %v", err)
		}
	}
}

func TestReadCameraJPEGIsNotEdited(t *testing.T) {
	m := Read(withEXIF(t, map[uint16]string{tagMake: "Apple", tagModel: "iPhone 15", tagSoftware: "17.4.1"}, binary.BigEndian))
	if e := EditedBy(m, DefaultEditors()); e != "" || m.Make != "Apple" {
		t.Fatalf("meta %+v edited by %q", m, e)
	}
}

func TestReadPlainJPEGAndPNG(t *testing.T) {
	var j, p bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 4, 4))
	_ = jpeg.Encode(&j, img, nil)
	_ = png.Encode(&p, img)
	if m := Read(j.Bytes()); m.Format != FormatJPEG || m.HasEXIF || m.Make != "" {
		t.Fatalf("plain jpeg: %+v", m)
	}
	if m := Read(p.Bytes()); m.Format != FormatPNG {
		t.Fatalf("png: %+v", m)
	}
	if m := Read([]byte("GIF89a")); m.Format != FormatUnknown {
		t.Fatalf("gif: %+v", m)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(withEXIF(f, map[uint16]string{tagMake: "x", tagSoftware: "GIMP 2.10"}, binary.LittleEndian))
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x10, 'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 0xFF, 0xFF, 0xFF, 0x7F})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := Read(data)
		if len(m.Make) > maxTagLen || len(m.Software) > maxTagLen {
			t.Fatalf("unbounded tag: %+v", m)
		}
	})
}
