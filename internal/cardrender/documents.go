package cardrender

import (
	"image"
	"image/color"
)

// MRZ geometry shared by the card back and the passport page: OCR-B at a pitch close to the
// ICAO 2.54 mm (about 35 px on a 1200 px card).
const (
	td1FontSize = 48
	td3FontSize = 35
)

// ChipIDFront renders the front of the 12-digit chip citizen identity card. The values sit in
// fixed boxes (see the ocr package's ChipIDFront layout); long places shrink to fit.
func (r *Renderer) ChipIDFront(p Person) (image.Image, Truth) {
	c := r.newCanvas(CardWidth, CardHeight, color.RGBA{})
	c.background(color.RGBA{236, 242, 232, 255}, color.RGBA{226, 236, 240, 255})
	// Emblem and header.
	c.disc(120, 110, 62, color.RGBA{205, 45, 40, 255})
	c.ring(120, 110, 62, 6, color.RGBA{230, 190, 60, 255})
	c.disc(120, 110, 22, color.RGBA{240, 205, 70, 255})
	c.centered(r.bold, 26, ink, 700, 58, "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM")
	c.centered(r.bold, 22, ink, 700, 94, "Độc lập - Tự do - Hạnh phúc")
	c.centered(r.bold, 40, red, 700, 158, "CĂN CƯỚC CÔNG DÂN")
	c.centered(r.sans, 20, labelInk, 700, 190, "Citizen Identity Card")
	c.photo(image.Rect(50, 230, 300, 560))

	c.text(r.sans, 22, labelInk, 340, 252, "Số / No.:")
	c.text(r.bold, 38, ink, 470, 252, p.IDNumber)
	c.text(r.sans, 22, labelInk, 340, 302, "Họ và tên / Full name:")
	c.fitted(r.bold, 32, ink, 340, 352, 820, p.FullName)
	c.text(r.sans, 20, labelInk, 340, 410, "Ngày sinh / Date of birth:")
	c.text(r.sans, 30, ink, 720, 410, vnDate(p.DateOfBirth))
	c.text(r.sans, 20, labelInk, 340, 465, "Giới tính / Sex:")
	sex := "Nam"
	if p.Sex == "F" {
		sex = "Nữ"
	}
	c.text(r.sans, 30, ink, 560, 465, sex)
	c.text(r.sans, 20, labelInk, 700, 465, "Quốc tịch / Nationality:")
	c.text(r.sans, 30, ink, 960, 465, "Việt Nam")
	c.text(r.sans, 20, labelInk, 340, 520, "Quê quán / Place of origin:")
	c.fitted(r.sans, 30, ink, 340, 568, 820, p.PlaceOfOrigin)
	c.text(r.sans, 20, labelInk, 340, 623, "Nơi thường trú / Place of residence:")
	c.fitted(r.sans, 30, ink, 340, 671, 820, p.PlaceOfResidence)
	c.text(r.sans, 18, labelInk, 50, 598, "Có giá trị đến:")
	c.text(r.sans, 18, labelInk, 50, 622, "Date of expiry")
	c.text(r.sans, 30, ink, 50, 680, vnDate(p.ExpiryDate))
	return c.img, idFrontTruth(p)
}

// idFrontTruth is the truth of a 12-digit card's front (with or without chip): the same
// fields in both.
func idFrontTruth(p Person) Truth {
	return Truth{Fields: map[string]string{
		"id_number":          p.IDNumber,
		"full_name":          p.FullName,
		"date_of_birth":      isoDate(p.DateOfBirth),
		"sex":                p.Sex,
		"nationality":        "VNM",
		"place_of_origin":    p.PlaceOfOrigin,
		"place_of_residence": p.PlaceOfResidence,
		"expiry_date":        isoDate(p.ExpiryDate),
	}}
}

// ChipIDBack renders the back of the chip ID card: identifying marks, the issue date, the
// issuing authority, fingerprint boxes, the chip and the TD1 machine readable zone.
func (r *Renderer) ChipIDBack(p Person) (image.Image, Truth) {
	c := r.newCanvas(CardWidth, CardHeight, color.RGBA{})
	c.background(color.RGBA{232, 238, 242, 255}, color.RGBA{238, 240, 230, 255})
	c.text(r.sans, 20, labelInk, 50, 60, "Đặc điểm nhận dạng / Personal identification:")
	c.fitted(r.sans, 24, ink, 50, 100, 700, p.Marks)
	c.text(r.sans, 20, labelInk, 50, 160, "Ngày, tháng, năm / Date, month, year:")
	c.text(r.sans, 30, ink, 50, 205, vnDate(p.IssueDate))
	c.text(r.bold, 17, ink, 50, 250, "CỤC TRƯỞNG CỤC CẢNH SÁT")
	c.text(r.bold, 17, ink, 50, 274, "QUẢN LÝ HÀNH CHÍNH VỀ TRẬT TỰ XÃ HỘI")
	c.ring(200, 350, 55, 4, color.RGBA{200, 60, 60, 255})
	c.fill(image.Rect(560, 90, 680, 180), color.RGBA{212, 178, 90, 255})
	c.frame(image.Rect(560, 90, 680, 180), 3, color.RGBA{150, 120, 50, 255})
	for i, label := range []string{"Ngón trỏ trái", "Ngón trỏ phải"} {
		box := image.Rect(790+i*200, 40, 970+i*200, 300)
		c.fill(box, color.RGBA{225, 228, 232, 255})
		c.frame(box, 2, labelInk)
		c.centered(r.sans, 16, labelInk, (box.Min.X+box.Max.X)/2, 325, label)
	}
	lines := p.TD1()
	c.fill(image.Rect(0, 520, CardWidth, CardHeight), color.RGBA{246, 246, 244, 255})
	for i, l := range lines {
		c.text(r.ocrb, td1FontSize, ink, 60, 590+i*62, l)
	}
	return c.img, Truth{Fields: map[string]string{"issue_date": isoDate(p.IssueDate)}, MRZ: lines}
}

// Passport renders a passport data page with a TD3 machine readable zone.
func (r *Renderer) Passport(p Person) (image.Image, Truth) {
	c := r.newCanvas(PassportWidth, PassportHeight, color.RGBA{})
	c.background(color.RGBA{238, 236, 226, 255}, color.RGBA{230, 236, 240, 255})
	c.centered(r.bold, 24, ink, 700, 50, "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM")
	c.centered(r.sans, 20, labelInk, 700, 80, "SOCIALIST REPUBLIC OF VIET NAM")
	c.centered(r.bold, 30, red, 700, 125, "HỘ CHIẾU / PASSPORT")
	c.photo(image.Rect(50, 160, 350, 560))
	row := func(x, y int, label, value string) {
		c.text(r.sans, 18, labelInk, x, y, label)
		c.text(r.sans, 28, ink, x, y+36, value)
	}
	row(400, 180, "Loại / Type", "P")
	row(600, 180, "Mã số / Code", "VNM")
	row(850, 180, "Số hộ chiếu / Passport N°", p.PassportNumber)
	row(400, 260, "Họ và tên / Full name", p.FullName)
	row(400, 340, "Quốc tịch / Nationality", "VIỆT NAM")
	row(850, 340, "Giới tính / Sex", map[string]string{"M": "Nam / M", "F": "Nữ / F"}[p.Sex])
	row(400, 420, "Ngày sinh / Date of birth", vnDate(p.DateOfBirth))
	row(850, 420, "Nơi sinh / Place of birth", p.PlaceOfBirth)
	row(400, 500, "Ngày cấp / Date of issue", vnDate(p.IssueDate))
	row(850, 500, "Có giá trị đến / Date of expiry", vnDate(p.ExpiryDate))
	row(400, 580, "Số GCMND / ID card N°", p.IDNumber)
	lines := p.TD3()
	c.fill(image.Rect(0, 680, PassportWidth, PassportHeight), color.RGBA{246, 246, 244, 255})
	for i, l := range lines {
		c.text(r.ocrb, td3FontSize, ink, 60, 760+i*64, l)
	}
	return c.img, Truth{Fields: map[string]string{
		"id_number":     p.IDNumber,
		"full_name":     p.FullName,
		"date_of_birth": isoDate(p.DateOfBirth),
		"sex":           p.Sex,
		"nationality":   "VNM",
		"issue_date":    isoDate(p.IssueDate),
		"expiry_date":   isoDate(p.ExpiryDate),
	}, MRZ: lines}
}

// VehicleRegistration renders a vehicle registration card ("GIẤY CHỨNG NHẬN ĐĂNG KÝ XE").
func (r *Renderer) VehicleRegistration(v Vehicle) (image.Image, Truth) {
	c := r.newCanvas(CardWidth, CardHeight, color.RGBA{})
	c.background(color.RGBA{240, 238, 222, 255}, color.RGBA{236, 232, 214, 255})
	c.disc(110, 95, 55, color.RGBA{205, 45, 40, 255})
	c.disc(110, 95, 20, color.RGBA{240, 205, 70, 255})
	c.centered(r.bold, 24, ink, 680, 55, "CỘNG HÒA XÃ HỘI CHỦ NGHĨA VIỆT NAM")
	c.centered(r.bold, 30, red, 680, 110, "GIẤY CHỨNG NHẬN ĐĂNG KÝ XE")
	c.centered(r.sans, 20, labelInk, 680, 142, "VEHICLE REGISTRATION CERTIFICATE")
	c.text(r.sans, 20, labelInk, 50, 210, "Tên chủ xe / Owner's full name:")
	c.fitted(r.bold, 30, ink, 50, 252, 1100, v.Owner)
	c.text(r.sans, 20, labelInk, 50, 300, "Địa chỉ / Address:")
	c.fitted(r.sans, 28, ink, 50, 342, 1100, v.Address)
	c.text(r.sans, 20, labelInk, 50, 400, "Nhãn hiệu / Brand:")
	c.text(r.sans, 28, ink, 300, 400, v.Brand)
	c.text(r.sans, 20, labelInk, 620, 400, "Số loại / Model code:")
	c.text(r.sans, 28, ink, 860, 400, v.Model)
	c.text(r.sans, 20, labelInk, 50, 460, "Số máy / Engine N°:")
	c.text(r.sans, 28, ink, 300, 460, v.EngineNumber)
	c.text(r.sans, 20, labelInk, 620, 460, "Màu sơn / Color:")
	c.text(r.sans, 28, ink, 860, 460, v.Color)
	c.text(r.sans, 20, labelInk, 50, 520, "Số khung / Chassis N°:")
	c.text(r.sans, 28, ink, 300, 520, v.ChassisNumber)
	c.text(r.sans, 20, labelInk, 50, 580, "Đăng ký lần đầu / First registration:")
	c.text(r.sans, 28, ink, 460, 580, vnDate(v.RegistrationDate))
	c.text(r.sans, 20, labelInk, 50, 660, "Biển số đăng ký / Number plate:")
	plate := image.Rect(440, 612, 760, 690)
	c.fill(plate, color.RGBA{250, 250, 250, 255})
	c.frame(plate, 4, ink)
	c.text(r.bold, 40, ink, 460, 668, v.Plate)
	return c.img, Truth{Fields: map[string]string{
		"owner":             v.Owner,
		"address":           v.Address,
		"brand":             v.Brand,
		"model":             v.Model,
		"engine_number":     v.EngineNumber,
		"chassis_number":    v.ChassisNumber,
		"color":             v.Color,
		"registration_date": isoDate(v.RegistrationDate),
		"plate":             v.Plate,
	}}
}
