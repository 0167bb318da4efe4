package coordinator

import "github.com/prometheus/client_golang/prometheus"

var (
	secretsCredsDesc = prometheus.NewDesc("rackfence_secrets_credentials",
		"Credentials records by the key that seals them; loaded=\"false\" means this member's key file lacks that key, so it cannot reveal them (alert on it).",
		[]string{"key", "loaded"}, nil)
	secretsPlainDesc = prometheus.NewDesc("rackfence_secrets_plaintext_credentials",
		"Credentials records still in plaintext from a version before sealing; rackfencectl secrets reencrypt seals them.", nil, nil)
	secretsKeysDesc = prometheus.NewDesc("rackfence_secrets_keys",
		"Keys in this member's secrets key file (0: it can neither store nor reveal passwords).", nil, nil)
)

// secretsCollector reports, at scrape time, what GET /v1/secrets shows
// for this member (stale: from its FSM as it is).
type secretsCollector struct{ s *Store }

func (c *secretsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- secretsCredsDesc
	ch <- secretsPlainDesc
	ch <- secretsKeysDesc
}

func (c *secretsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.SecretsStatus()
	loaded := 0
	for _, k := range st.Keys {
		l := "false"
		if k.Loaded {
			l = "true"
			loaded++
		}
		ch <- prometheus.MustNewConstMetric(secretsCredsDesc, prometheus.GaugeValue, float64(k.Credentials), k.ID, l)
	}
	ch <- prometheus.MustNewConstMetric(secretsPlainDesc, prometheus.GaugeValue, float64(st.Plaintext))
	ch <- prometheus.MustNewConstMetric(secretsKeysDesc, prometheus.GaugeValue, float64(loaded))
}
