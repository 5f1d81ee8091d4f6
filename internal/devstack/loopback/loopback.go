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
