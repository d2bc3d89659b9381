package cardrender

import (
	"image"
	"image/color"
)

// VehicleRegistrationBack renders the back of the vehicle registration card: the plate
// repeated, the vehicle's colour and first registration, and the issuing office's validation
// (issue date, authority, stamp), above a plain bottom band. It has no machine readable zone and no OCR layout; its truth
// holds the values it prints under the front's field names.
func (r *Renderer) VehicleRegistrationBack(v Vehicle) (image.Image, Truth) {
	c := r.newCanvas(CardWidth, CardHeight, color.RGBA{})
	c.background(color.RGBA{236, 234, 220, 255}, color.RGBA{240, 238, 226, 255})
	// The title stands alone in the top band, the English word first: "ĐĂNG KÝ" followed by
	// "RE…", "CE…" or "E…" (a cut "Number") reads within one OCR edit of the front's title
	// "ĐĂNG KÝ XE".
	c.centered(r.bold, 26, ink, 600, 70, "REGISTRATION / CHỨNG NHẬN ĐĂNG KÝ")
	c.text(r.sans, 20, labelInk, 60, 215, "Biển số đăng ký / Number plate:")
	plate := image.Rect(440, 170, 760, 245)
	c.fill(plate, color.RGBA{250, 250, 250, 255})
	c.frame(plate, 4, ink)
	c.text(r.bold, 38, ink, 460, 223, v.Plate)
	c.text(r.sans, 20, labelInk, 60, 290, "Màu sơn / Color:")
	c.text(r.sans, 28, ink, 300, 290, v.Color)
	c.text(r.sans, 20, labelInk, 60, 340, "Đăng ký lần đầu / First registration:")
	c.text(r.sans, 28, ink, 470, 340, vnDate(v.RegistrationDate))
	c.text(r.sans, 20, labelInk, 60, 390, "Có giá trị đến / Valid until:")
	c.text(r.sans, 28, ink, 470, 390, "Không thời hạn / Unlimited")
	c.text(r.sans, 20, labelInk, 60, 450, "Ngày cấp / Date of issue:")
	c.text(r.sans, 28, ink, 470, 450, vnDate(v.RegistrationDate))
	// The validation sits at the right; the bottom band stays plain paper, where a card back
	// with a machine readable zone would carry it.
	c.text(r.bold, 18, ink, 800, 290, "TRƯỞNG PHÒNG")
	c.text(r.bold, 18, ink, 800, 314, "CẢNH SÁT GIAO THÔNG")
	c.ring(1010, 420, 70, 5, color.RGBA{200, 60, 60, 255})
	c.ring(1010, 420, 48, 3, color.RGBA{200, 60, 60, 255})
	return c.img, Truth{Fields: map[string]string{
		"plate":             v.Plate,
		"color":             v.Color,
		"registration_date": isoDate(v.RegistrationDate),
	}}
}
