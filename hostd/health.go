package hostd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// healthClient checks services; a check that hangs must not hold up the reconcile.
var healthClient = &http.Client{Timeout: 2 * time.Second}

// checkHealth asks a running service's health URL once, as every reconcile does for a service
// that was healthy after its start: a process can be alive and hung. Without a health URL a
// running service is healthy.
func (s *supervisor) checkHealth(ctx context.Context, p *proc) error {
	if p.decl.Health == nil || p.decl.Health.HTTP == "" {
		return nil
	}
	if err := probe(ctx, p.decl.Health.HTTP); err != nil {
		s.setHealthy(p, false)
		return fmt.Errorf("unhealthy: GET %s: %w", p.decl.Health.HTTP, err)
	}
	return nil
}

// waitHealthy waits for a (re)started service to be up: its health URL answers 2xx within
// timeout, or, without one, it is still running after grace. A process that exits fails at once.
func (s *supervisor) waitHealthy(ctx context.Context, p *proc, timeout, grace time.Duration) error {
	if p.decl.Health == nil || p.decl.Health.HTTP == "" {
		end := time.NewTimer(grace)
		defer end.Stop()
		// Looked at often: a command that exits at once must fail where it starts.
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for s.running(p) {
			select {
			case <-end.C:
				s.setHealthy(p, true)
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
		}
		return s.exited(p)
	}
	url := p.decl.Health.HTTP
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if !s.running(p) {
			return s.exited(p)
		}
		if last = probe(ctx, url); last == nil {
			s.setHealthy(p, true)
			return nil
		}
		select {
		case <-deadline.C:
			s.setHealthy(p, false)
			return fmt.Errorf("health check %s did not answer 2xx within %s: %w", url, timeout, last)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// setHealthy notes whether p passed its health check, and records a change in services.json:
// the next hostd, re-adopting p, checks it as this one would.
func (s *supervisor) setHealthy(p *proc, ok bool) {
	s.mu.Lock()
	changed := p.healthy != ok
	p.healthy = ok
	s.mu.Unlock()
	if changed {
		s.save()
	}
}

func (s *supervisor) exited(p *proc) error {
	s.mu.Lock()
	exit := p.exit
	s.mu.Unlock()
	err := fmt.Errorf("service exited after start (%s); see %s", exit, s.logPath(p.ref))
	return withOutput(err, lastRun(s.logPath(p.ref)))
}

func probe(ctx context.Context, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	resp, err := healthClient.Do(req)
	if err != nil {
		// The URL is named by whoever reports the error; *url.Error would name it again.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			return ue.Err
		}
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errors.New(resp.Status)
	}
	return nil
}
