package main

import (
	"log/slog"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of the serving process to the file
// named by PGRANGER_CPU_PROFILE, for performance work (bench -cpuprofile).
// It returns the function that ends the profile; without the variable it
// does nothing.
func startCPUProfile(log *slog.Logger) (stop func()) {
	path := os.Getenv("PGRANGER_CPU_PROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		log.Error("PGRANGER_CPU_PROFILE", "err", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Error("PGRANGER_CPU_PROFILE", "err", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
