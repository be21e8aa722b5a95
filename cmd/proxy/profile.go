package main

import (
	"log/slog"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of the serving process to path
// (serve --cpuprofile, used by bench -cpuprofile). It returns the function
// that ends the profile; without a path it does nothing.
func startCPUProfile(log *slog.Logger, path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		log.Error("--cpuprofile", "err", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Error("--cpuprofile", "err", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
