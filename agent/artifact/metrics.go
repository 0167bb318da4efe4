package artifact

import "github.com/prometheus/client_golang/prometheus"

// metrics of the artifact server (registered on the agent's registry).
type metrics struct {
	hits, misses, evictions, mismatches prometheus.Counter
	drivesRead                          prometheus.Counter
	originBytes                         prometheus.Counter
	served, checksumFiles               *prometheus.CounterVec
	cacheBytes, drives                  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "rackfence_agent_image_cache_hits_total",
			Help: "Image requests (provisioner or BMC) answered from the rack's image cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "rackfence_agent_image_cache_misses_total",
			Help: "Image requests that had to wait for a fetch from the image's origin (started or joined)."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "rackfence_agent_image_cache_evictions_total",
			Help: "Cached images removed to stay within --image-cache-size (least recently used first)."}),
		mismatches: prometheus.NewCounter(prometheus.CounterOpts{Name: "rackfence_agent_image_cache_checksum_mismatches_total",
			Help: "Images fetched from their origin whose digest did not match the spec's checksum (never served)."}),
		originBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "rackfence_agent_image_cache_origin_bytes_total",
			Help: "Bytes fetched from images' origins into the cache."}),
		served: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_artifact_served_bytes_total",
			Help: "Bytes the artifact server sent, by kind (image, configdrive)."}, []string{"kind"}),
		checksumFiles: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_image_checksum_files_total",
			Help: "Checksum files read for images whose image.checksum is a URL, by result (ok, refused: not 200 or no usable line, unreachable)."}, []string{"result"}),
		cacheBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rackfence_agent_image_cache_bytes",
			Help: "Bytes of verified images in the cache."}),
		drivesRead: prometheus.NewCounter(prometheus.CounterOpts{Name: "rackfence_agent_config_drives_read_total",
			Help: "Config drives a BMC read (first GET answered in full, once per drive published)."}),
		drives: prometheus.NewGauge(prometheus.GaugeOpts{Name: "rackfence_agent_config_drives",
			Help: "Config drives the artifact server holds (one per host provisioned with user, network or meta data)."}),
	}
	if reg != nil {
		reg.MustRegister(m.hits, m.misses, m.evictions, m.mismatches, m.originBytes, m.served, m.checksumFiles, m.cacheBytes, m.drives, m.drivesRead)
	}
	return m
}
