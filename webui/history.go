package webui

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// The mesh's last day as a bar chart drawn on the server: one bar an hour, converged nodes
// below and the rest above, so a bad hour stands out without reading numbers.
const (
	historyHours  = 24
	historyBarW   = 18
	historyGap    = 4
	historyHeight = 90
	// historyPad leaves room below the bars for the axis labels.
	historyPad = 16
)

// historyStart is the first of the chart's moments, an hour apart up to now.
func historyStart(now time.Time) time.Time { return now.Add(-(historyHours - 1) * time.Hour) }

// historyFor is how long the chart's counts are kept: they are of hours, and counting them
// reads every node's reports of the day, which every open mesh page would otherwise do at
// every refresh.
const historyFor = time.Minute

// historyCache keeps the chart's counts for historyFor.
type historyCache struct {
	mu     sync.Mutex
	at     time.Time
	points []db.ConvergedAt
}

// convergedHistory is the chart's counts up to now, counted again once historyFor has passed.
func (u *UI) convergedHistory(ctx context.Context, now time.Time) ([]db.ConvergedAt, error) {
	h := &u.history
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.points != nil && !now.Before(h.at) && now.Sub(h.at) < historyFor {
		return h.points, nil
	}
	points, err := u.store.ConvergedHistory(ctx, historyStart(now), time.Hour, historyHours)
	if err != nil {
		return nil, err
	}
	h.at, h.points = now, points
	return points, nil
}

// historyChart is the chart as the template draws it: every coordinate worked out here.
type historyChart struct {
	Width, Height, PlotHeight int
	Bars                      []historyBar
	// Max is the most nodes counted at one moment, the top of the scale.
	Max int
	// Last is the newest moment's counts, said in words beside the chart.
	Last db.ConvergedAt
	// LabelY is where the axis labels sit; RightX where the right-hand one ends.
	LabelY, RightX int
}

// historyBar is one hour: the converged part at the bottom, the rest on top.
type historyBar struct {
	X, W       int
	ConvY      int
	ConvH      int
	NotY, NotH int
	Title      string
}

func buildHistory(points []db.ConvergedAt) historyChart {
	c := historyChart{Width: historyHours * (historyBarW + historyGap), PlotHeight: historyHeight}
	c.Height, c.LabelY = historyHeight+historyPad, historyHeight+12
	c.RightX = c.Width - historyGap
	for _, p := range points {
		c.Max = max(c.Max, p.Converged+p.NotConverged)
	}
	if len(points) > 0 {
		c.Last = points[len(points)-1]
	}
	for i, p := range points {
		b := historyBar{X: i * (historyBarW + historyGap), W: historyBarW,
			Title: fmt.Sprintf("%s: %d converged, %d not converged", hq.FormatTime(p.At), p.Converged, p.NotConverged)}
		b.ConvH, b.NotH = scaled(p.Converged, c.Max), scaled(p.NotConverged, c.Max)
		b.ConvY = historyHeight - b.ConvH
		b.NotY = b.ConvY - b.NotH
		c.Bars = append(c.Bars, b)
	}
	return c
}

// scaled is n of most as a height on the plot; any node at all is at least a pixel, so a
// single node that is not converged is never drawn away.
func scaled(n, most int) int {
	if n == 0 || most == 0 {
		return 0
	}
	return max(1, n*historyHeight/most)
}
