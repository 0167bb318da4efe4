// Package bench is rackfence's load generator: it drives the coordinator
// (PUT /v1/hosts/{name}) and, for comparison in the same run, etcd v3's
// JSON gateway (POST /v3/kv/put) with the same body size, the same client
// count and the same HTTP client, and reports writes per second and latency
// percentiles. It also measures leader failover (kill -9 of the leader →
// next accepted write) and fills a coordinator with many hosts carrying
// hardware details for the memory figures. The binary is rackfence-load;
// deploy/bench.sh runs it side by side with a 3-member etcd.
package bench
