// Command pairserver is a service for the end-to-end tests: it reads two files once, at start,
// and serves them together, as a program that reads its configuration as a pair would.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	a := flag.String("a", "", "first file")
	b := flag.String("b", "", "second file")
	addrFile := flag.String("addr-file", "", "write the bound address here")
	healthy := flag.String("healthy-unless", "", "answer /healthz with 500 when the pair contains this")
	flag.Parse()
	pair := read(*a) + "|" + read(*b)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			log.Fatal(err)
		}
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, pair) })
	// /pid lets a test stop the server by hand, as an operator would, behind hostd's back.
	http.HandleFunc("/pid", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, os.Getpid()) })
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if *healthy != "" && strings.Contains(pair, *healthy) {
			http.Error(w, "unhealthy pair", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	})
	log.Fatal(http.Serve(ln, nil))
}

func read(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "missing"
	}
	return strings.TrimSpace(string(b))
}
