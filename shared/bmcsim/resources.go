package bmcsim

import "fmt"

// The Redfish documents each BMC serves. Built per request from the BMC's
// small state: nothing is stored per BMC but that state.

type doc = map[string]any

const v1 = "/redfish/v1"

func ref(path string) doc { return doc{"@odata.id": path} }

func refs(paths ...string) []doc {
	out := make([]doc, 0, len(paths))
	for _, p := range paths {
		out = append(out, ref(p))
	}
	return out
}

func collection(path, typ, name string, members ...string) doc {
	return doc{
		"@odata.id": path, "@odata.type": "#" + typ + "." + typ, "Name": name,
		"Members": refs(members...), "Members@odata.count": len(members),
	}
}

func resource(path, typ, id, name string) doc {
	return doc{"@odata.id": path, "@odata.type": "#" + typ + ".v1_0_0." + typ, "Id": id, "Name": name}
}

func with(d doc, kv ...any) doc {
	for i := 0; i+1 < len(kv); i += 2 {
		d[kv[i].(string)] = kv[i+1]
	}
	return d
}

var okStatus = doc{"State": "Enabled", "Health": "OK"}

func serviceRoot() doc {
	return with(resource(v1, "ServiceRoot", "RootService", "rackfence bmcsim"),
		"RedfishVersion", "1.11.0",
		"UUID", "92384634-2938-2342-8820-489239905423",
		"Systems", ref(v1+"/Systems"),
		"Managers", ref(v1+"/Managers"),
		"Chassis", ref(v1+"/Chassis"),
		"UpdateService", ref(v1+"/UpdateService"),
		"SessionService", ref(v1+"/SessionService"),
		"Links", doc{"Sessions": ref(v1 + "/SessionService/Sessions")},
	)
}

func sessionService() doc {
	return with(resource(v1+"/SessionService", "SessionService", "SessionService", "Session Service"),
		"ServiceEnabled", true, "SessionTimeout", 1800, "Status", okStatus,
		"Sessions", ref(v1+"/SessionService/Sessions"))
}

func (b *bmc) system() doc {
	sys := v1 + "/Systems/1"
	return with(resource(sys, "ComputerSystem", "1", "System"),
		"SystemType", "Physical",
		"Manufacturer", "Rackfence", "Model", "SimServer 1000",
		"SerialNumber", fmt.Sprintf("SIM%06d", b.index),
		"UUID", fmt.Sprintf("00000000-0000-4000-8000-%012x", b.index),
		"BiosVersion", "1.2.3",
		"PowerState", onOff(b.power),
		"Status", okStatus,
		"ProcessorSummary", doc{"Count": 2, "Model": "Sim Xeon 16C", "Status": okStatus},
		"MemorySummary", doc{"TotalSystemMemoryGiB": 64, "Status": okStatus},
		"Boot", doc{
			"BootSourceOverrideTarget":                         b.boot.Target,
			"BootSourceOverrideEnabled":                        b.boot.Enabled,
			"BootSourceOverrideMode":                           b.boot.Mode,
			"BootSourceOverrideTarget@Redfish.AllowableValues": bootTargets,
		},
		"Processors", ref(sys+"/Processors"),
		"Memory", ref(sys+"/Memory"),
		"Storage", ref(sys+"/Storage"),
		"EthernetInterfaces", ref(sys+"/EthernetInterfaces"),
		"NetworkInterfaces", ref(sys+"/NetworkInterfaces"),
		"Bios", ref(sys+"/Bios"),
		"Links", doc{"ManagedBy": refs(v1 + "/Managers/1"), "Chassis": refs(v1 + "/Chassis/1")},
		"Actions", doc{"#ComputerSystem.Reset": doc{
			"target":                            sys + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": resetTypes,
		}},
	)
}

var bootTargets = []string{"None", "Pxe", "Hdd", "Cd", "BiosSetup", "UefiHttp", "Usb"}

var resetTypes = []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "PowerCycle", "Nmi", "PushPowerButton"}

func processor(i int) doc {
	p := fmt.Sprintf("%s/Systems/1/Processors/CPU%d", v1, i)
	return with(resource(p, "Processor", fmt.Sprintf("CPU%d", i), fmt.Sprintf("Processor %d", i)),
		"Socket", fmt.Sprintf("CPU %d", i), "ProcessorType", "CPU", "ProcessorArchitecture", "x86",
		"InstructionSet", "x86-64", "Manufacturer", "Intel(R) Corporation", "Model", "Sim Xeon 16C",
		"MaxSpeedMHz", 3000, "TotalCores", 16, "TotalThreads", 32, "Status", okStatus)
}

func dimm(i int) doc {
	p := fmt.Sprintf("%s/Systems/1/Memory/DIMM%d", v1, i)
	return with(resource(p, "Memory", fmt.Sprintf("DIMM%d", i), fmt.Sprintf("DIMM %d", i)),
		"MemoryDeviceType", "DDR4", "MemoryType", "DRAM", "CapacityMiB", 16384, "VolatileSizeMiB", 16384,
		"OperatingSpeedMhz", 3200, "Manufacturer", "Sim", "SerialNumber", fmt.Sprintf("D%04d", i),
		"PartNumber", "SIM-16G", "Status", okStatus)
}

func storage() doc {
	p := v1 + "/Systems/1/Storage/1"
	return with(resource(p, "Storage", "1", "Storage Controller"),
		"Drives", refs(p+"/Drives/Disk1"), "Drives@odata.count", 1, "Status", okStatus,
		"StorageControllers", []doc{{"@odata.id": p + "#/StorageControllers/0", "MemberId": "0", "Name": "Sim RAID", "Status": okStatus}})
}

func drive(index int) doc {
	p := v1 + "/Systems/1/Storage/1/Drives/Disk1"
	return with(resource(p, "Drive", "Disk1", "Disk 1"),
		"Model", "Sim SSD 480", "Manufacturer", "Sim", "SerialNumber", fmt.Sprintf("S%06d", index),
		"MediaType", "SSD", "Protocol", "SATA", "CapacityBytes", int64(480103981056), "Revision", "1.0",
		"BlockSizeBytes", 512, "Status", okStatus)
}

func (b *bmc) ethernet() doc {
	p := v1 + "/Systems/1/EthernetInterfaces/NIC1"
	return with(resource(p, "EthernetInterface", "NIC1", "Ethernet Interface 1"),
		"MACAddress", b.mac, "PermanentMACAddress", b.mac, "SpeedMbps", 10000, "LinkStatus", "LinkUp",
		"InterfaceEnabled", true, "MTUSize", 1500, "AutoNeg", true, "Status", okStatus)
}

func networkInterface() doc {
	p := v1 + "/Systems/1/NetworkInterfaces/NIC1"
	return with(resource(p, "NetworkInterface", "NIC1", "Network Interface 1"), "Status", okStatus,
		"Links", doc{"NetworkAdapter": ref(v1 + "/Chassis/1/NetworkAdapters/NIC1")})
}

func networkAdapter() doc {
	p := v1 + "/Chassis/1/NetworkAdapters/NIC1"
	return with(resource(p, "NetworkAdapter", "NIC1", "Network Adapter 1"),
		"Manufacturer", "Sim", "Model", "Sim 10GbE", "SerialNumber", "NA0001", "PartNumber", "SIM-10G",
		"Status", okStatus, "NetworkPorts", ref(p+"/NetworkPorts"))
}

func (b *bmc) networkPort() doc {
	p := v1 + "/Chassis/1/NetworkAdapters/NIC1/NetworkPorts/NIC1"
	return with(resource(p, "NetworkPort", "NIC1", "Port 1"),
		"PhysicalPortNumber", "1", "ActiveLinkTechnology", "Ethernet", "LinkStatus", "Up",
		"CurrentLinkSpeedMbps", 10000, "AssociatedNetworkAddresses", []string{b.mac}, "Status", okStatus)
}

func bios() doc {
	return with(resource(v1+"/Systems/1/Bios", "Bios", "Bios", "BIOS Configuration"),
		"Description", "Sim BIOS", "Attributes", doc{"BootMode": "Uefi"})
}

func (b *bmc) manager() doc {
	m := v1 + "/Managers/1"
	return with(resource(m, "Manager", "1", "Manager"),
		"ManagerType", "BMC", "Model", "SimBMC", "FirmwareVersion", "2.0.0", "Description", "Sim BMC",
		"Status", okStatus, "PowerState", "On",
		"VirtualMedia", ref(m+"/VirtualMedia"),
		"Links", doc{"ManagerForServers": refs(v1 + "/Systems/1"), "ManagerForChassis": refs(v1 + "/Chassis/1")},
		"Actions", doc{"#Manager.Reset": doc{
			"target":                            m + "/Actions/Manager.Reset",
			"ResetType@Redfish.AllowableValues": []string{"GracefulRestart", "ForceRestart"},
		}},
	)
}

func (b *bmc) virtualMedia() doc {
	p := v1 + "/Managers/1/VirtualMedia/CD1"
	img := any(nil)
	name := any(nil)
	if b.media.Image != "" {
		img = b.media.Image
		name = b.media.Image
	}
	return with(resource(p, "VirtualMedia", "CD1", "Virtual CD"),
		"MediaTypes", []string{"CD", "DVD"}, "Image", img, "ImageName", name,
		"Inserted", b.media.Inserted, "WriteProtected", true, "ConnectedVia", connectedVia(b.media.Inserted),
		"TransferProtocolType", "HTTP",
		"Actions", doc{
			"#VirtualMedia.InsertMedia": doc{"target": p + "/Actions/VirtualMedia.InsertMedia"},
			"#VirtualMedia.EjectMedia":  doc{"target": p + "/Actions/VirtualMedia.EjectMedia"},
		})
}

func connectedVia(inserted bool) string {
	if inserted {
		return "URI"
	}
	return "NotConnected"
}

func (b *bmc) chassis() doc {
	c := v1 + "/Chassis/1"
	return with(resource(c, "Chassis", "1", "Chassis"),
		"ChassisType", "RackMount", "Manufacturer", "Rackfence", "Model", "SimServer 1000",
		"SerialNumber", fmt.Sprintf("CH%06d", b.index), "PowerState", onOff(b.power), "Status", okStatus,
		"Power", ref(c+"/Power"), "NetworkAdapters", ref(c+"/NetworkAdapters"),
		"Links", doc{"ComputerSystems": refs(v1 + "/Systems/1"), "ManagedBy": refs(v1 + "/Managers/1")})
}

func power() doc {
	p := v1 + "/Chassis/1/Power"
	return with(resource(p, "Power", "Power", "Power"),
		"PowerSupplies", []doc{{
			"@odata.id": p + "#/PowerSupplies/0", "MemberId": "0", "Name": "PSU 1",
			"Manufacturer": "Sim", "Model": "SIM-750", "SerialNumber": "PSU0001",
			"PowerCapacityWatts": 750, "FirmwareVersion": "1.0", "Status": okStatus,
		}},
		"PowerControl", []doc{{"@odata.id": p + "#/PowerControl/0", "MemberId": "0", "Name": "System Power", "PowerConsumedWatts": 180}})
}

func updateService() doc {
	return with(resource(v1+"/UpdateService", "UpdateService", "UpdateService", "Update Service"),
		"ServiceEnabled", true, "Status", okStatus, "FirmwareInventory", ref(v1+"/UpdateService/FirmwareInventory"))
}

func firmware(id, name, version string) doc {
	p := v1 + "/UpdateService/FirmwareInventory/" + id
	return with(resource(p, "SoftwareInventory", id, name), "Version", version, "Updateable", true, "Status", okStatus)
}
