package fraud

import (
	"fmt"

	"github.com/idstream/idstream/schemas"
)

// Attack types of schemas.LivenessAssessed.AttackType and the liveness signals read when
// it names none.
const (
	attackPrint  = "print"
	attackReplay = "replay"
	attackMask   = "mask"

	signalLivenessReplay = "replay"
	signalLivenessPrint  = "print"
	attackSignalMin      = 0.5 // a 2-D signal at or above this explains a spoof
)

// presentationCheck reports the presentation attack the liveness result of st's current
// selfie names: pass when live; fail presentation_print, presentation_replay or
// presentation_mask when not, by the result's attack type, else by its signals (replay or
// print when that signal is the larger and reaches 0.5, mask otherwise). Skipped no_selfie
// in flows without a selfie, and liveness_not_assessed when liveness could not assess the
// selfie (no face, several faces, unreadable: the liveness check fails those itself).
// Score, threshold and model version are the liveness result's. The caller makes sure
// (ready) that st.Liveness is about the current selfie when the flow has one.
func presentationCheck(st *schemas.SessionState) schemas.Check {
	if !hasStep(st, stepSelfie) {
		return newCheck(CheckPresentationAttack, schemas.CheckSkipped, ReasonNoSelfie, "the flow takes no selfie")
	}
	l := st.Liveness
	if l == nil {
		return newCheck(CheckPresentationAttack, schemas.CheckSkipped, ReasonLivenessUnavailable, "no liveness result")
	}
	var c schemas.Check
	attack := ""
	switch {
	case l.Live:
		c = newCheck(CheckPresentationAttack, schemas.CheckPass, "", "")
	case l.AttackType != nil && *l.AttackType != "":
		attack = *l.AttackType
	case l.Score == 0 && len(l.Signals) == 0:
		c = newCheck(CheckPresentationAttack, schemas.CheckSkipped, ReasonLivenessUnavailable, "liveness could not assess the selfie")
	default:
		attack = attackFromSignals(l.Signals)
	}
	if attack != "" {
		reason := ReasonPresentationMask
		switch attack {
		case attackPrint:
			reason = ReasonPresentationPrint
		case attackReplay:
			reason = ReasonPresentationReplay
		}
		c = newCheck(CheckPresentationAttack, schemas.CheckFail, reason,
			fmt.Sprintf("liveness score %.2f below %.2f; most likely attack: %s", l.Score, l.Threshold, attack))
	}
	if c.Status != schemas.CheckSkipped {
		c.Score, c.Threshold = ptr(l.Score), ptr(l.Threshold)
	}
	if l.ModelVersion != "" {
		c.ModelVersion = ptr(l.ModelVersion)
	}
	c.CaptureID = ptr(l.CaptureID)
	return c
}

// attackFromSignals names the attack a non-live result's signals point to.
func attackFromSignals(signals map[string]float64) string {
	replay, print := signals[signalLivenessReplay], signals[signalLivenessPrint]
	switch {
	case replay >= print && replay >= attackSignalMin:
		return attackReplay
	case print > replay && print >= attackSignalMin:
		return attackPrint
	}
	return attackMask
}

// livenessReady reports whether st holds the liveness result of its current selfie (always
// true in flows without a selfie).
func livenessReady(st *schemas.SessionState) bool {
	if !hasStep(st, stepSelfie) {
		return true
	}
	s, ok := currentSelfie(st)
	if !ok {
		// No accepted selfie image: the face checks are skipped, nothing to wait for.
		return true
	}
	return st.Liveness != nil && st.Liveness.CaptureID == s.captureID
}
