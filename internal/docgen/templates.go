package docgen

// allTemplates lists every template. Variant "-a" templates belong to Calibration and "-b"
// templates to HeldOut; each document type has at least one of each (the chip ID card has
// two real layouts, 2021 and 2024, each in both halves).
func allTemplates() []template {
	t := func(name, typ string, split Split, sides []string, real string, draw func(*gen, int) error) template {
		v := 0
		if split == HeldOut {
			v = 1
		}
		return template{TemplateInfo{Name: name, Type: typ, Split: split, Sides: sides, Real: real},
			func(g *gen) error { return draw(g, v) }}
	}
	card := []string{StepFront, StepBack}
	pass := []string{StepPassport}
	const (
		cmnd     = "9-digit people's identity card (Giấy chứng minh nhân dân, CMND)"
		cccd2016 = "12-digit citizen identity card without chip, 2016 (Căn cước công dân)"
		cccd2021 = "chip citizen identity card, 2021 (Căn cước công dân gắn chip)"
		cc2024   = "identity card with chip, 2024 (Căn cước)"
		pp       = "Vietnamese passport data page (TD3)"
		veh      = "vehicle registration certificate (Giấy chứng nhận đăng ký xe)"
	)
	return []template{
		t("cmnd-a", LegacyIDCard, Calibration, card, cmnd, drawCMND),
		t("cmnd-b", LegacyIDCard, HeldOut, card, cmnd, drawCMND),
		t("cccd2016-a", IDCard, Calibration, card, cccd2016, drawCCCD2016),
		t("cccd2016-b", IDCard, HeldOut, card, cccd2016, drawCCCD2016),
		t("cccd2021-a", ChipIDCard, Calibration, card, cccd2021, drawCCCD2021),
		t("cccd2021-b", ChipIDCard, HeldOut, card, cccd2021, drawCCCD2021),
		t("cancuoc2024-a", ChipIDCard, Calibration, card, cc2024, drawCanCuoc2024),
		t("cancuoc2024-b", ChipIDCard, HeldOut, card, cc2024, drawCanCuoc2024),
		t("passport-a", Passport, Calibration, pass, pp, drawPassport),
		t("passport-b", Passport, HeldOut, pass, pp, drawPassport),
		t("vehreg-a", VehicleRegistration, Calibration, card, veh, drawVehicle),
		t("vehreg-b", VehicleRegistration, HeldOut, card, veh, drawVehicle),
	}
}
