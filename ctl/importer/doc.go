// Package importer turns other inventories into rackfence hosts and back,
// without a call to the coordinator: metal3 BareMetalHost and Secret
// documents (ConvertBMH, for `host apply -f`), an OpenStack Ironic's nodes
// and ports (ReadIronic, which only reads, and ConvertIronic, for `import
// ironic`), and hosts as BareMetalHost and Secret documents (ExportBMH,
// ExportSecret, RevealedSecret, for `host export -o bmh`). The commands,
// the plan against the coordinator's hosts and records and the calls that
// carry it out stay in ctl (bmh_cmd.go, ironic_cmd.go, bmh_apply.go,
// bmh_export.go). Both inputs become an Input: planned hosts, records,
// refusals and notes.
package importer
