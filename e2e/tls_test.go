package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// testCA is a certificate authority made for one test, nothing downloaded.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
	// file is the CA's certificate, PEM, as HOSTD_CA and HQ_CLIENT_CA take it.
	file string
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, dir: t.TempDir()}
	ca.file = filepath.Join(ca.dir, "ca.pem")
	os.WriteFile(ca.file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	return ca
}

// issue makes a certificate for name (a server on 127.0.0.1, or a node's client) and returns
// the paths of its certificate and key.
func (ca *testCA) issue(t *testing.T, name string, client bool) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if client {
		tmpl.ExtKeyUsage, tmpl.DNSNames = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, []string{name}
	} else {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(ca.dir, name+".pem"), filepath.Join(ca.dir, name+".key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// https is a client that trusts ca, for the operator's calls.
func (ca *testCA) https() *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// The controller over HTTPS only, with node certificates: hosts verify it with HOSTD_CA and
// converge; a certificate for another node gets 403; a host with the wrong CA refuses to talk
// and says why; a plain HTTP request reaches nothing.
func TestTransportOverTLSWithNodeCertificates(t *testing.T) {
	ca, other := newTestCA(t, "hq test CA"), newTestCA(t, "somebody else's CA")
	cert, key := ca.issue(t, "hq", false)
	p := start(t, "hq", append(dbEnv(t, testdb.New(t)), "HQ_ADDR=127.0.0.1:0", "HQ_ADMIN_TOKEN="+adminToken,
		"HQ_TLS_CERT="+cert, "HQ_TLS_KEY="+key, "HQ_CLIENT_CA="+ca.file), "hq", "serve")
	var addr string
	waitFor(t, 20*time.Second, "controller to listen", func() bool {
		if m := addrRE.FindStringSubmatch(p.out.String()); m != nil {
			addr = m[1]
			return true
		}
		return false
	})
	url := "https://" + addr
	op := ca.https()
	call := func(method, path string, body any) (int, []byte) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = strings.NewReader(string(b))
		}
		req, _ := http.NewRequest(method, url+"/api/v1"+path, rd)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := op.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, b := call("PUT", "/modules/motd", map[string]any{"resources": []hq.Resource{{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "over TLS\n"}}}); code != 201 {
		t.Fatalf("upload over TLS: %d %s", code, b)
	}
	keyResp, err := op.Get(url + "/api/v1/controller-key")
	if err != nil {
		t.Fatal(err)
	}
	var k struct{ Key string }
	json.NewDecoder(keyResp.Body).Decode(&k)
	keyResp.Body.Close()

	hostFor := func(node, certName string, caFile string) *host {
		var reg struct{ Token string }
		if code, b := call("POST", "/nodes", map[string]string{"name": node}); code != 201 {
			t.Fatalf("register %s: %d %s", node, code, b)
		} else {
			json.Unmarshal(b, &reg)
		}
		call("PUT", "/nodes/"+node+"/assignments/motd", map[string]bool{"taken": false})
		c, kf := ca.issue(t, certName, true)
		dir := t.TempDir()
		root := filepath.Join(dir, "root")
		os.MkdirAll(root, 0o755)
		env := []string{"HOSTD_CONTROLLER=" + url, "HOSTD_NODE=" + node, "HOSTD_TOKEN=" + reg.Token, "HOSTD_ROOT=" + root,
			"HOSTD_STATE_DIR=" + filepath.Join(dir, "state"), "HOSTD_INTERVAL=1s", "HOSTD_WAIT=5s",
			"HOSTD_CONTROLLER_KEY=" + k.Key, "HOSTD_CA=" + caFile, "HOSTD_CERT=" + c, "HOSTD_KEY=" + kf,
			"HOSTD_STOP_SERVICES_ON_EXIT=1"}
		return &host{proc: start(t, "hostd "+node, env, "hostd", "run"), node: node, root: root, state: filepath.Join(dir, "state")}
	}
	good := hostFor("web-1", "web-1", ca.file)
	borrowed := hostFor("web-2", "web-1", ca.file)
	distrustful := hostFor("web-3", "web-3", other.file)

	waitFor(t, 20*time.Second, "web-1 to converge over TLS", func() bool {
		return readFile(filepath.Join(good.root, "etc/motd")) == "over TLS\n"
	})
	waitFor(t, 20*time.Second, "web-2 to be refused for another node's certificate", func() bool {
		return strings.Contains(borrowed.out.String(), "403") && strings.Contains(borrowed.out.String(), "client certificate")
	})
	waitFor(t, 20*time.Second, "web-3 to refuse a controller its CA does not vouch for", func() bool {
		return strings.Contains(distrustful.out.String(), "certificate signed by unknown authority")
	})
	for _, n := range []string{"web-2", "web-3"} {
		var v hq.NodeView
		_, b := call("GET", "/nodes/"+n, nil)
		json.Unmarshal(b, &v)
		if v.Status != hq.StatusNew {
			t.Errorf("%s is %s: it should never have been heard", n, v.Status)
		}
	}
	if _, err := os.Stat(filepath.Join(borrowed.root, "etc/motd")); err == nil {
		t.Error("web-2 applied a declaration fetched with another node's certificate")
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("plain HTTP reached the controller: %s", b)
		}
	}
}
