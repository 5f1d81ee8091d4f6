package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func mustAllow(t testing.TB, s string) AllowList {
	t.Helper()
	a, err := ParseAllowList(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// internalURLs are registrations that reach internal services in every mode: cloud metadata,
// private networks, link-local and unique-local addresses, in the spellings that got through.
var internalURLs = []string{
	"http://169.254.169.254/latest/meta-data/iam/security-credentials/",
	"http://[::ffff:169.254.169.254]/",
	"http://[::ffff:a9fe:a9fe]/",
	"http://[64:ff9b::a9fe:a9fe]/", // NAT64
	"http://[2002:a9fe:a9fe::1]/",  // 6to4
	"http://[::169.254.169.254]/",  // IPv4-compatible
	"http://10.0.0.1/",
	"http://172.16.5.4:8443/x",
	"http://192.168.1.1/",
	"http://100.100.100.200/latest/meta-data/", // Alibaba metadata, carrier-grade NAT space
	"http://[fd00::1]/",
	"http://[fd00:ec2::254]/",
	"http://[fe80::1%25eth0]/",
	"http://metadata.google.internal/computeMetadata/v1/",
	"http://METADATA.google.internal./",
	"http://metadata/",
	"http://instance-data.ec2.internal/",
	"http://0.0.0.0:8080/",
	"http://[::]/",
	"http://224.0.0.1/",
	"http://255.255.255.255/",
}

// loopbackURLs reach this host: refused in prod, allowed in dev when written canonically.
var loopbackURLs = []string{
	"http://127.0.0.1:8080/internal/config",
	"http://127.0.0.2/",
	"http://[::1]:8080/",
	"http://localhost:8080/internal/config",
	"http://LocalHost./",
	"http://api.localhost/",
	"http://[::ffff:127.0.0.1]/",
	"http://[::ffff:7f00:1]/",
}

// numericURLs are non-canonical spellings of 127.0.0.1 (and of one public address): numeric
// forms and a Unicode name. What they dial depends on the resolver, so they are refused in every
// mode.
var numericURLs = []string{
	"http://2130706433/",
	"http://0x7f000001/",
	"http://0x7f.1/",
	"http://127.1/",
	"http://0177.0.0.1/",
	"http://127.0.0.01/",
	"http://0/",
	"http://1.2.3.4.5/",
	"http://0x/",
	"http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/",
	"http://134744072/", // 8.8.8.8
}

var publicURLs = []string{
	"https://vendor.example/api",
	"http://93.184.216.34:8080/",
	"https://[2606:4700:4700::1111]/",
	"https://user:pass@vendor.example/",
	"https://8.8.8.8.nip.io/", // a name: judged by what it resolves to when dialled
}

func TestProdRefusesInternalAndLoopback(t *testing.T) {
	prod := New(AllowList{}, false)
	for _, u := range append(append(internalURLs, loopbackURLs...), numericURLs...) {
		err := prod.CheckURL(u)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("prod accepted %s (err %v)", u, err)
		}
	}
	for _, u := range publicURLs {
		if err := prod.CheckURL(u); err != nil {
			t.Errorf("prod refused public %s: %v", u, err)
		}
	}
}

func TestDevAllowsLoopbackOnly(t *testing.T) {
	dev := New(AllowList{}, true)
	for _, u := range loopbackURLs {
		if err := dev.CheckURL(u); err != nil {
			t.Errorf("dev refused loopback %s: %v", u, err)
		}
	}
	for _, u := range append(internalURLs, numericURLs...) {
		if err := dev.CheckURL(u); !errors.Is(err, ErrRefused) {
			t.Errorf("dev accepted %s (err %v)", u, err)
		}
	}
}

func TestSchemes(t *testing.T) {
	p := New(AllowList{}, true)
	for _, u := range []string{"file:///etc/passwd", "gopher://vendor.example/", "ftp://vendor.example/", "//vendor.example/", "vendor.example", "http://", "http:///x"} {
		if err := p.CheckURL(u); !errors.Is(err, ErrRefused) {
			t.Errorf("accepted %q (err %v)", u, err)
		}
	}
}

// The error names the address a spelling stands for and how to allow it.
func TestRefusalSaysWhy(t *testing.T) {
	err := New(AllowList{}, false).CheckURL("http://[::ffff:169.254.169.254]/")
	if err == nil || !strings.Contains(err.Error(), "169.254.169.254") || !strings.Contains(err.Error(), "link-local") ||
		!strings.Contains(err.Error(), "PIPELINE_ALLOWED_HOSTS") {
		t.Fatalf("error %v", err)
	}
	err = New(AllowList{}, false).CheckURL("http://metadata.google.internal/")
	if err == nil || !strings.Contains(err.Error(), "metadata.google.internal (169.254.169.254)") {
		t.Fatalf("error %v", err)
	}
}

func TestAllowList(t *testing.T) {
	p := New(mustAllow(t, " vendor.corp.example , 10.20.0.0/16,fd12::7, 127.0.0.1 ,"), false)
	for _, u := range []string{"http://10.20.3.4/", "http://[::ffff:10.20.3.4]/", "http://[fd12::7]:9000/", "http://VENDOR.corp.example./",
		"http://127.0.0.1:8080/", "http://localhost:8080/"} {
		if err := p.CheckURL(u); err != nil {
			t.Errorf("allow-listed %s refused: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.21.0.1/", "http://[fd12::8]/", "http://[::1]/"} {
		if err := p.CheckURL(u); !errors.Is(err, ErrRefused) {
			t.Errorf("%s accepted (err %v)", u, err)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "vendor corp", "http://x", "2130706433", "a..b"} {
		if _, err := ParseAllowList(bad); err == nil {
			t.Errorf("allow list %q parsed", bad)
		}
	}
	var back AllowList
	if text, _ := mustAllow(t, "A.example.,10.0.0.5/8").MarshalText(); string(text) != "a.example,10.0.0.0/8" ||
		back.UnmarshalText(text) != nil || back.String() != string(text) {
		t.Errorf("MarshalText = %q, read back as %q", text, back.String())
	}
}

func TestClassify(t *testing.T) {
	for addr, want := range map[string]Class{
		"8.8.8.8": Public, "2606:4700::1": Public, "127.9.9.9": Loopback, "::1": Loopback, "::ffff:127.0.0.1": Loopback,
		"0.1.2.3": Unspecified, "::": Unspecified, "169.254.169.254": LinkLocal, "fe80::1": LinkLocal, "10.1.1.1": Private,
		"172.31.255.255": Private, "172.32.0.1": Public, "192.168.0.1": Private, "100.64.0.1": SharedCGNAT, "100.128.0.1": Public,
		"fd00::1": UniqueLocal, "fc00::1": UniqueLocal, "ff02::1": Multicast, "64:ff9b::10.0.0.1": Private, "64:ff9b::8.8.8.8": Public,
		"2002:0a00:0001::": Private, "::10.0.0.1": Private,
	} {
		if got := Classify(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Classify(%s) = %q, want %q", addr, got, want)
		}
	}
}
