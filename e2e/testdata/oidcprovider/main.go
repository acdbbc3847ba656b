// Command oidcprovider is an OpenID Connect provider for the end-to-end tests, built on
// zitadel/oidc's op package: an issuer over plain HTTP on a loopback port, one confidential
// client, and users who sign in with a password at a form of its own. It keeps everything in
// memory and prints "oidcprovider serving issuer=URL" once it listens.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"html/template"
	"log"
	"net"
	"net/http"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// users is the repeatable -user flag: NAME:PASSWORD:GROUP,GROUP…
type users map[string]*user

func (u users) String() string { return fmt.Sprint(len(u), " users") }

func (u users) Set(s string) error {
	name, rest, ok := strings.Cut(s, ":")
	pass, groups, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || name == "" || pass == "" {
		return fmt.Errorf("%q is not NAME:PASSWORD:GROUPS", s)
	}
	u[name] = &user{name: name, password: pass}
	if groups != "" {
		u[name].groups = strings.Split(groups, ",")
	}
	return nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	c := &client{}
	flag.StringVar(&c.id, "client-id", "hq", "the client's id")
	flag.StringVar(&c.secret, "client-secret", "", "the client's secret")
	flag.StringVar(&c.redirect, "redirect-uri", "", "the client's one redirect URI")
	us := users{}
	flag.Var(us, "user", "NAME:PASSWORD:GROUP,GROUP… (repeatable)")
	flag.Parse()
	if c.secret == "" || c.redirect == "" {
		log.Fatal("-client-secret and -redirect-uri are required")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	s, err := newStorage(c, us)
	if err != nil {
		log.Fatal(err)
	}
	var key [32]byte
	rand.Read(key[:])
	provider, err := op.NewProvider(&op.Config{CryptoKey: key, CodeMethodS256: true, AuthMethodPost: true},
		s, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	l := &login{s: s, done: op.AuthCallbackURL(provider)}
	mux.HandleFunc("GET /login", l.form)
	mux.Handle("POST /login", op.NewIssuerInterceptor(provider.IssuerFromRequest).HandlerFunc(l.check))
	mux.Handle("/", provider)
	fmt.Printf("oidcprovider serving issuer=%s\n", issuer)
	log.Fatal(http.Serve(ln, mux))
}

var page = template.Must(template.New("login").Parse(`<!doctype html>
<title>provider sign-in</title>
<h1>Sign in at the provider</h1>
{{if .Error}}<p id="provider-error">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="id" value="{{.ID}}">
<label>user <input id="username" name="username" autofocus></label>
<label>password <input id="password" name="password" type="password"></label>
<button id="provider-submit" type="submit">sign in</button>
</form>`))

// login is the provider's own form, which op sends the browser to with the request's id.
type login struct {
	s    *storage
	done func(context.Context, string) string
}

func (l *login) form(w http.ResponseWriter, r *http.Request) {
	page.Execute(w, struct{ ID, Error string }{r.URL.Query().Get("id"), ""})
}

func (l *login) check(w http.ResponseWriter, r *http.Request) {
	id := r.PostFormValue("id")
	if err := l.s.signIn(id, r.PostFormValue("username"), r.PostFormValue("password")); err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		page.Execute(w, struct{ ID, Error string }{id, err.Error()})
		return
	}
	http.Redirect(w, r, l.done(r.Context(), id), http.StatusFound)
}
