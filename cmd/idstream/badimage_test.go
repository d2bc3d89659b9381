package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math/rand/v2"
	"net/http"
	"testing"
)

// bombPNG is a valid PNG header declaring 100000×100000 pixels with almost no data.
func bombPNG() []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 100000)
	binary.BigEndian.PutUint32(ihdr[4:], 100000)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// TestBadImagesThroughTheEdge posts unusable images to the document and selfie steps of a
// real service: each is refused with 422 invalid_image, and the service (whose vision groups
// run OpenCV, which aborts the process on bad input) keeps answering and deciding.
func TestBadImagesThroughTheEdge(t *testing.T) {
	s := testService(t, allGroups)
	c := newClient(t, s)
	init := c.openSession("id_card")
	id, token := str(init["session_id"]), str(init["sdk_token"])

	sharp := sharpImage(t, 1)
	var pngImg, gifImg bytes.Buffer
	small := image.NewPaletted(image.Rect(0, 0, 64, 64), []color.Color{color.Black, color.White})
	_ = png.Encode(&pngImg, image.NewGray(image.Rect(0, 0, 8, 8)))
	_ = gif.Encode(&gifImg, small, nil)
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rand.IntN(256))
	}
	cases := map[string][]byte{
		"truncated JPEG": sharp[:len(sharp)/2],
		"empty file":     {},
		"decompression bomb (100000×100000 PNG)": bombPNG(),
		"GIF":          gifImg.Bytes(),
		"random bytes": random,
	}
	for name, data := range cases {
		for _, step := range []struct{ endpoint, side string }{{"document", "front"}, {"selfie", ""}} {
			t.Run(name+" "+step.endpoint, func(t *testing.T) {
				r := c.upload(id, step.endpoint, step.side, data, token)
				if r.status != http.StatusUnprocessableEntity || r.json(t)["code"] != "invalid_image" {
					t.Fatalf("%d %s, want 422 invalid_image", r.status, r.body)
				}
			})
		}
	}
	t.Run("PNG named .jpg", func(t *testing.T) {
		// A real PNG uploaded as "capture.jpg" is judged by its bytes: a tiny PNG is a
		// usable image format, refused by the quality gate (not_framed), never a crash.
		r := c.upload(id, "document", "front", pngImg.Bytes(), token)
		if r.status != http.StatusOK || r.json(t)["status"] != "retake" {
			t.Fatalf("%d %s, want 200 retake", r.status, r.body)
		}
	})
	// Still alive: a good session of the same service decides.
	if got := c.waitStatus(runFlow(t, s, c, "vehicle_registration", 5), "verified", "rejected"); got["status"] == nil {
		t.Fatal("no decision after the bad images")
	}
}
