package cardrender

import (
	"image"
	"image/color"
	"math"

	"golang.org/x/image/font/opentype"
)

// This file draws the two identity cards without chip: the 12-digit citizen identity card of
// 2016–2020 ("CĂN CƯỚC CÔNG DÂN", Vietnamese labels only, no machine readable zone) and the
// 9-digit identity card ("GIẤY CHỨNG MINH NHÂN DÂN"). Both are ID-1 cards rendered at
// CardWidth × CardHeight; their value boxes are mirrored by the ocr package's IDCardFront,
// IDCardBack, LegacyIDFront and LegacyIDBack layouts.

// IDCardFront renders the front of the 12-digit citizen identity card without chip: the
// title without the English subtitle of the chip card, Vietnamese labels only, the number
// in red.
func (r *Renderer) IDCardFront(p Person) (image.Image, Truth) {
	c := r.newCanvas(CardWidth, CardHeight, color.RGBA{})
	c.background(color.RGBA{232, 240, 246, 255}, color.RGBA{240, 242, 230, 255})
	c.disc(120, 110, 62, color.RGBA{205, 45, 40, 255})
	c.ring(120, 110, 62, 6, color.RGBA{230, 190, 60, 255})
	c.disc(120, 110, 22, color.RGBA{240, 205, 70, 255})
	c.centered(r.bold, 26, ink, 700, 58, "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM")
	c.centered(r.bold, 22, ink, 700, 94, "Độc lập - Tự do - Hạnh phúc")
	c.centered(r.bold, 42, red, 700, 162, "CĂN CƯỚC CÔNG DÂN")
	c.photo(image.Rect(50, 215, 300, 545))

	c.text(r.sans, 24, labelInk, 340, 240, "Số:")
	c.text(r.bold, 38, red, 420, 240, p.IDNumber)
	c.text(r.sans, 22, labelInk, 340, 292, "Họ và tên:")
	c.fitted(r.bold, 32, ink, 340, 342, 820, p.FullName)
	c.text(r.sans, 22, labelInk, 340, 400, "Ngày, tháng, năm sinh:")
	c.text(r.sans, 30, ink, 640, 400, vnDate(p.DateOfBirth))
	c.text(r.sans, 22, labelInk, 340, 455, "Giới tính:")
	c.text(r.sans, 30, ink, 470, 455, sexWord(p.Sex))
	c.text(r.sans, 22, labelInk, 640, 455, "Quốc tịch:")
	c.text(r.sans, 30, ink, 770, 455, "Việt Nam")
	c.text(r.sans, 22, labelInk, 340, 508, "Quê quán:")
	c.fitted(r.sans, 30, ink, 340, 556, 820, p.PlaceOfOrigin)
	c.text(r.sans, 22, labelInk, 340, 610, "Nơi thường trú:")
	c.fitted(r.sans, 30, ink, 340, 660, 820, p.PlaceOfResidence)
	c.text(r.sans, 20, labelInk, 50, 600, "Có giá trị đến:")
	c.text(r.sans, 28, ink, 50, 650, vnDate(p.ExpiryDate))
	return c.img, idFrontTruth(p)
}

// IDCardBack renders the back of the 12-digit card without chip: identifying marks, the issue
// date, the issuing authority with its stamp, and the two fingerprint boxes. It has no machine
// readable zone, so its Truth has no MRZ.
func (r *Renderer) IDCardBack(p Person) (image.Image, Truth) {
	c := r.newCanvas(CardWidth, CardHeight, color.RGBA{})
	c.background(color.RGBA{236, 240, 244, 255}, color.RGBA{242, 240, 230, 255})
	c.text(r.sans, 22, labelInk, 50, 70, "Đặc điểm nhận dạng:")
	c.fitted(r.sans, 28, ink, 50, 114, 700, p.Marks)
	c.text(r.sans, 22, labelInk, 50, 190, "Ngày, tháng, năm:")
	c.text(r.sans, 30, ink, 50, 236, vnDate(p.IssueDate))
	c.text(r.bold, 18, ink, 50, 290, "CỤC TRƯỞNG CỤC CẢNH SÁT")
	c.text(r.bold, 18, ink, 50, 316, "ĐKQL CƯ TRÚ VÀ DLQG VỀ DÂN CƯ")
	c.ring(210, 420, 62, 4, color.RGBA{200, 60, 60, 255})
	c.ring(210, 420, 44, 2, color.RGBA{200, 60, 60, 255})
	c.signature(330, 430, 180)
	for i, label := range []string{"Ngón trỏ trái", "Ngón trỏ phải"} {
		box := image.Rect(790+i*200, 40, 970+i*200, 300)
		c.fill(box, color.RGBA{225, 228, 232, 255})
		c.fingerprint(box)
		c.frame(box, 2, labelInk)
		c.centered(r.sans, 16, labelInk, (box.Min.X+box.Max.X)/2, 325, label)
	}
	c.guilloche(image.Rect(0, 560, CardWidth, CardHeight))
	return c.img, Truth{Fields: map[string]string{
		"identifying_marks": p.Marks,
		"issue_date":        isoDate(p.IssueDate),
	}}
}

// LegacyIDFront renders the front of the 9-digit identity card: emblem and photo on the left,
// header, title, the red number and the holder's name, date of birth (printed DD-MM-YYYY),
// place of origin and place of permanent registration on the right.
func (r *Renderer) LegacyIDFront(p LegacyPerson) (image.Image, Truth) {
	c := r.newCanvas(CardWidth, CardHeight, color.RGBA{})
	c.background(color.RGBA{222, 236, 240, 255}, color.RGBA{232, 240, 226, 255})
	c.guilloche(image.Rect(0, 0, CardWidth, CardHeight))
	c.disc(165, 120, 80, color.RGBA{205, 45, 40, 255})
	c.ring(165, 120, 80, 7, color.RGBA{230, 190, 60, 255})
	c.disc(165, 120, 28, color.RGBA{240, 205, 70, 255})
	c.photo(image.Rect(55, 235, 285, 540))
	c.centered(r.bold, 24, ink, 760, 55, "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM")
	c.centered(r.bold, 21, ink, 760, 88, "Độc lập - Tự do - Hạnh phúc")
	c.centered(r.bold, 36, red, 760, 150, "GIẤY CHỨNG MINH NHÂN DÂN")
	c.text(r.bold, 26, red, 470, 215, "SỐ")
	c.text(r.bold, 40, red, 560, 215, p.IDNumber)
	c.text(r.sans, 22, labelInk, 330, 282, "Họ tên:")
	c.fitted(r.bold, 32, ink, 455, 282, 720, p.FullName)
	c.text(r.sans, 22, labelInk, 330, 350, "Sinh ngày:")
	c.text(r.sans, 30, ink, 470, 350, vnDateDash(p.DateOfBirth))
	c.text(r.sans, 22, labelInk, 330, 418, "Nguyên quán:")
	c.fitted(r.sans, 30, ink, 330, 462, 840, p.PlaceOfOrigin)
	c.text(r.sans, 22, labelInk, 330, 530, "Nơi ĐKHK thường trú:")
	c.fitted(r.sans, 30, ink, 330, 574, 840, p.PlaceOfResidence)
	return c.img, Truth{Fields: map[string]string{
		"id_number":          p.IDNumber,
		"full_name":          p.FullName,
		"date_of_birth":      isoDate(p.DateOfBirth),
		"place_of_origin":    p.PlaceOfOrigin,
		"place_of_residence": p.PlaceOfResidence,
	}}
}

// LegacyIDBack renders the back of the 9-digit identity card: the fingerprint boxes on the
// left; ethnicity, religion, identifying marks, the issue date written out ("Ngày 15 tháng 03
// năm 2012") and the issuing authority with its stamp on the right. No machine readable zone.
func (r *Renderer) LegacyIDBack(p LegacyPerson) (image.Image, Truth) {
	c := r.newCanvas(CardWidth, CardHeight, color.RGBA{})
	c.background(color.RGBA{226, 238, 240, 255}, color.RGBA{236, 240, 228, 255})
	c.guilloche(image.Rect(0, 0, CardWidth, CardHeight))
	for i, label := range []string{"NGÓN TRỎ TRÁI", "NGÓN TRỎ PHẢI"} {
		box := image.Rect(40+i*210, 70, 230+i*210, 360)
		c.fill(box, color.RGBA{228, 232, 234, 255})
		c.fingerprint(box)
		c.frame(box, 2, labelInk)
		c.centered(r.bold, 16, labelInk, (box.Min.X+box.Max.X)/2, 55, label)
	}
	c.text(r.bold, 20, labelInk, 480, 70, "DÂN TỘC:")
	c.text(r.sans, 28, ink, 610, 70, p.Ethnicity)
	c.text(r.bold, 20, labelInk, 820, 70, "TÔN GIÁO:")
	c.text(r.sans, 28, ink, 960, 70, p.Religion)
	c.text(r.bold, 20, labelInk, 480, 140, "DẤU VẾT RIÊNG VÀ DỊ HÌNH")
	c.fitted(r.sans, 28, ink, 480, 184, 700, p.Marks)
	issued := "Ngày " + p.IssueDate.Format("02") + " tháng " + p.IssueDate.Format("01") + " năm " + p.IssueDate.Format("2006")
	c.centered(r.sans, 28, ink, 830, 280, issued)
	c.centered(r.bold, 20, ink, 830, 325, "GIÁM ĐỐC")
	c.fittedCentered(r.bold, 24, ink, 830, 362, 700, p.IssuingAuthority)
	c.ring(640, 470, 62, 4, color.RGBA{200, 60, 60, 255})
	c.ring(640, 470, 44, 2, color.RGBA{200, 60, 60, 255})
	c.signature(760, 470, 200)
	return c.img, Truth{Fields: map[string]string{
		"ethnicity":         p.Ethnicity,
		"religion":          p.Religion,
		"identifying_marks": p.Marks,
		"issue_date":        isoDate(p.IssueDate),
		"issuing_authority": p.IssuingAuthority,
	}}
}

// sexWord is the sex as the cards print it.
func sexWord(sex string) string {
	if sex == "F" {
		return "Nữ"
	}
	return "Nam"
}

// fittedCentered draws s centred on cx at size, shrunk (down to 60 %) until it fits in
// maxWidth.
func (c *canvas) fittedCentered(f *opentype.Font, size float64, col color.Color, cx, y, maxWidth int, s string) {
	sz := size
	for sz > size*0.6 && c.width(f, sz, s) > maxWidth {
		sz--
	}
	c.centered(f, sz, col, cx, y, s)
}

// fingerprint draws a stylised print inside box: concentric elliptic ridges, light enough not
// to pass for text.
func (c *canvas) fingerprint(box image.Rectangle) {
	cx, cy := float64(box.Min.X+box.Max.X)/2, float64(box.Min.Y+box.Max.Y)/2
	rx, ry := float64(box.Dx())*0.36, float64(box.Dy())*0.38
	ridge := color.RGBA{170, 175, 185, 255}
	for k := 1; k <= 9; k++ {
		f := float64(k) / 9
		for a := 0.0; a < 2*math.Pi; a += 0.004 {
			x := cx + rx*f*math.Cos(a)
			y := cy + ry*f*math.Sin(a)*(1+0.08*math.Sin(3*a))
			c.img.SetRGBA(int(x), int(y), ridge)
			c.img.SetRGBA(int(x)+1, int(y), ridge)
		}
	}
}

// signature draws a pen stroke of the given width starting at (x, y).
func (c *canvas) signature(x, y, width int) {
	pen := color.RGBA{40, 50, 120, 255}
	for i := 0; i < width*4; i++ {
		t := float64(i) / 4
		px := float64(x) + t
		py := float64(y) + 18*math.Sin(t/14) + 8*math.Sin(t/5)
		c.fill(image.Rect(int(px), int(py), int(px)+2, int(py)+2), pen)
	}
}

// guilloche overlays faint interlaced sine curves on r, a security-print pattern light enough
// to stay behind the text.
func (c *canvas) guilloche(r image.Rectangle) {
	for k := 0; k < 6; k++ {
		phase := float64(k) * math.Pi / 3
		for x := r.Min.X; x < r.Max.X; x++ {
			for _, base := range []int{r.Min.Y + r.Dy()/4, r.Min.Y + 3*r.Dy()/4} {
				y := base + int(float64(r.Dy())/6*math.Sin(float64(x)/55+phase))
				if !(image.Point{x, y}).In(r) {
					continue
				}
				p := c.img.RGBAAt(x, y)
				c.img.SetRGBA(x, y, color.RGBA{p.R - p.R/14, p.G - p.G/18, p.B - p.B/12, 255})
			}
		}
	}
}
