package loadgen

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// FailoverResult is what the failover phase saw: a controller killed while the fleet reported
// at the steady rate, its hosts turning to the others.
type FailoverResult struct {
	// Killed is the controller killed, numbered from 1 as the lines number them, and Hosts how
	// many hosts spoke to it then.
	Killed int `json:"killed"`
	Hosts  int `json:"hosts"`
	// Moved is how many of those a controller that lives answered before the phase ended, and
	// Slowest and P99 how long after the kill the last of them and the 99th in a hundred were
	// first answered.
	Moved   int           `json:"moved"`
	Slowest time.Duration `json:"slowest_ns"`
	P99     time.Duration `json:"p99_ns"`
	// Checked says the reports were counted in the database (PostgreSQL); then Acked is how
	// many reports of the fleet's hosts any controller acknowledged with 200 since they
	// registered, and Lost how many of those the database does not hold.
	Checked bool  `json:"checked"`
	Acked   int64 `json:"acked"`
	Lost    int64 `json:"lost"`
}

// Line is the failover's figures, for the phase's line.
func (r FailoverResult) Line() string {
	s := fmt.Sprintf("controller #%d killed: %d of its %d host(s) answered by another, the last %s after the kill (p99 %s)",
		r.Killed, r.Moved, r.Hosts, ms(r.Slowest), ms(r.P99))
	if r.Checked {
		s += fmt.Sprintf("; %d report(s) acknowledged, %d of them missing from the database", r.Acked, r.Lost)
	}
	return s
}

// failover reports at the steady rate for SteadyFor and kills the first controller a third
// of the way in. Its hosts find nobody there and turn to the next controller, as hostd does;
// the phase says how soon each was answered by one that lives, and, on PostgreSQL, whether
// every report a controller acknowledged is in the database.
func (f *Fleet) failover(ctx context.Context, r *PhaseResult) error {
	if len(f.admins) < 2 || f.cfg.Kill == nil {
		return errors.New("failover needs two controllers or more, started by the generator (-hq, -controllers)")
	}
	const victim = 0
	done := make(chan error, 1)
	go func() { done <- f.reportAt(ctx, r, f.cfg.SteadyRate, f.cfg.SteadyFor) }()
	select {
	case <-time.After(f.cfg.SteadyFor / 3):
	case <-ctx.Done():
		<-done
		return ctx.Err()
	}
	var hosts []*fleetHost
	for _, h := range f.hosts {
		if h.Controller() == victim {
			hosts = append(hosts, h)
		}
	}
	fo := &FailoverResult{Killed: victim + 1, Hosts: len(hosts)}
	r.Failover = fo
	// The operator's calls after the phase go to one that lives; the dead one's figures are
	// gone with it.
	f.admin = f.admins[victim+1]
	f.cfg.Pids = slices.Clone(f.cfg.Pids)
	if victim < len(f.cfg.Pids) {
		f.cfg.Pids[victim] = 0
	}
	killed := time.Now()
	if err := f.cfg.Kill(victim); err != nil {
		<-done
		return fmt.Errorf("killing controller #%d: %w", victim+1, err)
	}
	took := f.untilAnswered(hosts, victim, killed, done)
	err := <-done
	fo.Moved = len(took)
	if len(took) > 0 {
		slices.Sort(took)
		fo.Slowest, fo.P99 = took[len(took)-1], took[(len(took)*99)/100]
	}
	if f.cfg.Postgres != "" {
		fo.Checked = true
		var lerr error
		if fo.Acked, fo.Lost, lerr = f.lost(ctx); lerr != nil {
			return errors.Join(err, fmt.Errorf("counting reports in the database: %w", lerr))
		}
	}
	return err
}

// untilAnswered watches hosts until a controller other than victim has answered each since
// killed, or done is ready (the reports have stopped; done is then given back its value), and
// returns how long after killed each was first seen answered.
func (f *Fleet) untilAnswered(hosts []*fleetHost, victim int, killed time.Time, done chan error) []time.Duration {
	var took []time.Duration
	left := slices.Clone(hosts)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for len(left) > 0 {
		select {
		case err := <-done:
			done <- err
			return took
		case <-tick.C:
		}
		left = slices.DeleteFunc(left, func(h *fleetHost) bool {
			at, by := h.Answered()
			if by == victim || !at.After(killed) {
				return false
			}
			took = append(took, at.Sub(killed))
			return true
		})
	}
	return took
}

// lost counts the fleet's acknowledged reports and those of them the database does not hold:
// a report acknowledged is a report row of its own or one more repeat of the node's last, so a
// node holds at least as many as its host was acknowledged (more when an answer was lost with
// its controller).
func (f *Fleet) lost(ctx context.Context) (acked, lost int64, err error) {
	conn, err := pgx.Connect(ctx, f.cfg.Postgres)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT node, SUM(1 + repeats)::bigint FROM reports WHERE starts_with(node, $1) GROUP BY node", f.cfg.Prefix)
	if err != nil {
		return 0, 0, err
	}
	held := map[string]int64{}
	for rows.Next() {
		var node string
		var n int64
		if err := rows.Scan(&node, &n); err != nil {
			return 0, 0, err
		}
		held[node] = n
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	for _, h := range f.hosts {
		a := h.Acks()
		acked += a
		lost += max(0, a-held[h.Name])
	}
	return acked, lost, nil
}
