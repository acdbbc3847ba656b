package webui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// when is a moment shown both ways: relative for a glance, absolute UTC for the record.
type when struct {
	Rel, Abs string
}

func at(t time.Time, now time.Time) when {
	if t.IsZero() {
		return when{Rel: "never"}
	}
	return when{Rel: ago(now.Sub(t)), Abs: t.UTC().Format(time.RFC3339)}
}

func atPtr(t *time.Time, now time.Time) when {
	if t == nil {
		return when{Rel: "never"}
	}
	return at(*t, now)
}

// notYet is a moment still to come, such as the end of what has not ended.
func notYet(t *time.Time, now time.Time) when {
	if t == nil {
		return when{Rel: "not yet"}
	}
	return at(*t, now)
}

// ago renders an age coarsely, the way an operator says it; a time ahead of the clock (a skewed
// host) says so rather than showing a negative age.
func ago(d time.Duration) string {
	suffix := " ago"
	d = d.Round(time.Second)
	if d < 0 {
		d, suffix = -d, " ahead"
	}
	switch {
	case d < 2*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds%s", int(d/time.Second), suffix)
	case d < time.Hour:
		return fmt.Sprintf("%dm%s", int(d/time.Minute), suffix)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%s", int(d/time.Hour), suffix)
	default:
		return fmt.Sprintf("%dd%s", int(d/(24*time.Hour)), suffix)
	}
}

// tone is the colour family of a word; the word itself is always printed beside the colour.
type tone string

const (
	toneGood    tone = "good"
	toneBad     tone = "bad"
	toneWarn    tone = "warn"
	toneWait    tone = "wait"
	toneNeutral tone = "neutral"
)

func statusTone(s hq.Status) tone {
	switch s {
	case hq.StatusConverged:
		return toneGood
	case hq.StatusStuck, hq.StatusSilent:
		return toneBad
	case hq.StatusDegraded, hq.StatusWaitingOnTake:
		return toneWarn
	case hq.StatusMidChange:
		return toneWait
	}
	return toneNeutral
}

func stateTone(s hq.State) tone {
	switch s {
	case hq.StateApplied:
		return toneGood
	case hq.StateStuck:
		return toneBad
	case hq.StateFailed, hq.StateHeld:
		return toneWarn
	case hq.StatePending, hq.StateGroupedPending:
		return toneWait
	}
	return toneNeutral
}

func outcomeTone(outcome string) tone {
	switch outcome {
	case "applied":
		return toneGood
	case "refused":
		return toneBad
	case "sent":
		return toneWait
	}
	return toneNeutral
}

func scopeTone(scope string) tone {
	if scope == hq.ScopeMeshWide {
		return toneBad
	}
	return toneWarn
}

// badge is a coloured word.
type badge struct {
	Word string
	Tone tone
}

// short cuts a digest to what a person compares by eye.
func short(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

func hqNotFound(err error) bool { return hq.ErrorCode(err) == hq.CodeNotFound }

// errMessage is the message of a coded error, which is written to be shown.
func errMessage(err error) string {
	if e, ok := errors.AsType[*hq.Error](err); ok {
		return e.Message
	}
	return "error"
}

// messagePage is a page with one message: sign in, not found, error.
type messagePage struct {
	chrome
	Message string
}
