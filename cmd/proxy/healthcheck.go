package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// healthcheckCommand asks the admin endpoint's /readyz (or --url) and exits
// 0 on 200, 1 otherwise: a container health check for images without curl.
// --insecure accepts the admin endpoint's self-signed certificate (it is
// asked over loopback, inside the container).
func healthcheckCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:9432/readyz", "the URL to ask")
	insecure := fs.Bool("insecure", false, "do not verify the endpoint's TLS certificate")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	c := &http.Client{Timeout: *timeout}
	if *insecure {
		c.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	}
	resp, err := c.Get(*url)
	if err != nil {
		fmt.Fprintf(stderr, "pgranger healthcheck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(stdout, "%d %s\n", resp.StatusCode, strings.TrimSpace(string(body)))
	if resp.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}
