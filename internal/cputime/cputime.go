// Package cputime reads the CPU time of the running process, which the
// benchmarks of this repository report beside wall-clock time: on a machine
// whose cores are shared, steal inflates the wall clock and not this.
package cputime
