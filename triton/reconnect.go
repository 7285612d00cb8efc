package triton

// ResetConnectBackoff makes every connection that failed dial again now
// instead of after gRPC's backoff, which grows to two minutes while a
// server stays away: a health probe calls it so that a server restarted on
// the same address is seen at the next probe. Balancers find it with a
// type assertion; the HTTP client dials per request and has none.
func (c *grpcClient) ResetConnectBackoff() {
	for _, conn := range c.conns {
		conn.ResetConnectBackoff()
	}
}
