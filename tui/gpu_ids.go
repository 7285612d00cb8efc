package tui

import (
	"strconv"
	"strings"

	"github.com/tritontop/tritontop/stats"
)

// gpuID names GPU i of gpus in the GPU pane: its index and, from 40
// cells, its model ("0 H100 80GB HBM3"). In a run over several replicas
// the GPUs are listed replica by replica and each is named by its replica
// and its index on that server ("10.0.0.2:8001/1"), with the model where
// the pane is wide enough, so that two servers' GPU 0 are told apart.
func gpuID(gpus []stats.GPU, i, iw int) string {
	g := &gpus[i]
	if g.Replica == "" {
		id := strconv.Itoa(i)
		if g.Name != "" && iw >= 40 {
			id += " " + strings.TrimPrefix(g.Name, "NVIDIA ")
		}
		return id
	}
	n := 0
	for j := range i {
		if gpus[j].Replica == g.Replica {
			n++
		}
	}
	id := replicaHost(g.Replica) + "/" + strconv.Itoa(n)
	if g.Name != "" && iw >= 80 {
		id += " " + strings.TrimPrefix(g.Name, "NVIDIA ")
	}
	return id
}

// replicaHost is a replica's URL without its scheme: "10.0.0.2:8001".
func replicaHost(url string) string {
	if i := strings.Index(url, "://"); i >= 0 {
		return url[i+3:]
	}
	return url
}

// gpuMoreHint says whose the GPUs left off are when they are replicas':
// " GPUs on 10.0.0.2:8001", or " GPUs on 2 replicas" (they are listed
// replica by replica).
func gpuMoreHint(rest []stats.GPU) string {
	var first, prev string
	n := 0
	for i := range rest {
		if r := rest[i].Replica; r != "" && r != prev {
			if n == 0 {
				first = r
			}
			prev = r
			n++
		}
	}
	switch n {
	case 0:
		return " GPUs"
	case 1:
		return " GPUs on " + replicaHost(first)
	}
	return " GPUs on " + strconv.Itoa(n) + " replicas"
}
