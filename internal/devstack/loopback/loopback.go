// Package loopback hands out loopback addresses for the stand-ins and test servers.
package loopback

import (
	"net"
	"strconv"
)

// FreeAddr returns a loopback address with a port free right now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// PreferredOrFree returns preferred when it can be listened on right now, else a loopback
// address with a free port, so a stand-in keeps its documented port across restarts and still
// starts when something else holds it. moved says which happened.
func PreferredOrFree(preferred string) (addr string, moved bool, err error) {
	if l, err := net.Listen("tcp", preferred); err == nil {
		_ = l.Close()
		return preferred, false, nil
	}
	addr, err = FreeAddr()
	return addr, true, err
}
