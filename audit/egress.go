package audit

// Egress is the record of one connection a sandboxed command made, or
// tried to make, through the egress proxy: Decision allow or deny, Gate
// "egress", Reason why it was refused or cut short, and the connection in
// Conn.
const Egress Type = "egress"

// EgressConn is what an egress record says of its connection.
type EgressConn struct {
	// Proto is "http", "connect" or "socks5".
	Proto string `json:"proto"`
	// Host and Port are what the command asked for; Addr the address
	// dialed ("" when none was).
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	Addr string `json:"addr,omitempty"`
	// Up and Down are the bytes moved from the command to the server and
	// back.
	Up   int64 `json:"up"`
	Down int64 `json:"down"`
}
