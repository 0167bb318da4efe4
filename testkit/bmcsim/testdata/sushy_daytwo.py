"""Drive the day-two resources of one bmcsim BMC with Debian's
python3-sushy (4.3.3): BIOS attributes and their registry, a BIOS setting
read back after a reset, the firmware inventory, a SimpleUpdate followed
with sushy's task monitor, and a volume created and deleted.

Usage: /usr/bin/python3 sushy_daytwo.py BASE_URL USER PASSWORD SYSTEM_PATH
       ATTR JSON_VALUE APPLY_TIME IMAGE_URL
APPLY_TIME is "" or a sushy.ApplyTime value (e.g. OnReset).
Prints one JSON object; exits non-zero on any failure it does not report.
"""
import json
import sys

import sushy
from sushy import auth as sushy_auth
from sushy.resources.registry import message_registry_file
from sushy.resources.updateservice import softwareinventory
from sushy import taskmonitor

base, user, password, system_path, attr, value, apply_time, image = sys.argv[1:9]
value = json.loads(value)
out = {}

conn = sushy.Sushy(base + "/redfish/v1",
                   auth=sushy_auth.SessionOrBasicAuth(username=user, password=password),
                   verify=False)
system = conn.get_system(system_path)

# BIOS: attributes, registry, one attribute set and read back after a reset.
bios = system.bios
out["bios_before"] = bios.attributes.get(attr)
# Debian's python3-sushy 4.3.3 ships without sushy/standard_registries/,
# so anything reading conn.registries (get_attribute_registry, parsing
# settings messages) raises FileNotFoundError. Then the registry is read
# through sushy's own MessageRegistryFile class, from the service root's
# Registries, and messages are parsed without registries.
try:
    registry = bios.get_attribute_registry()
    out["registries"] = "ok"
except FileNotFoundError:
    out["registries"] = "FileNotFoundError"
    registry = None
    files = message_registry_file.MessageRegistryFileCollection(
        conn._conn, conn.json["Registries"]["@odata.id"], redfish_version=conn.redfish_version)
    for f in files.get_members():
        if f.identity == bios.json.get("AttributeRegistry"):
            registry = f.get_attribute_registry("en", None)
out["registry"] = None
if registry is not None:
    entries = {a.name: a for a in registry.registry_entries.attributes}
    a = entries.get(attr)
    out["registry"] = {"id": registry.identity, "attributes": len(entries),
                       "type": a.attribute_type if a else None,
                       "values": [v.get("ValueName") for v in (a.allowable_values or [])] if a else None}
bios.set_attribute(attr, value, apply_time=sushy.ApplyTime(apply_time) if apply_time else None)
out["pending"] = bios.pending_attributes.get(attr)
system.reset_system(sushy.RESET_FORCE_RESTART)
bios.refresh()
out["bios_after"] = bios.attributes.get(attr)
try:
    status = bios.update_status
except FileNotFoundError:
    status = bios._settings.get_status({})
out["update_status"] = str(status.status)
out["update_messages"] = [m.message_id for m in (status.messages or [])]

# Firmware: inventory, SimpleUpdate of the BIOS item, followed to the end.
# sushy 4.3.3 requires UpdateService.Actions: bmcweb (multipart push only)
# has none, so sushy cannot read its update service; its inventory is then
# read with sushy's SoftwareInventoryCollection class.
try:
    us = conn.get_update_service()
    inv_coll = us.firmware_inventory
except sushy.exceptions.MissingAttributeError as e:
    out["update_service"] = "%s: %s" % (type(e).__name__, e)
    us = None
    inv_coll = softwareinventory.SoftwareInventoryCollection(
        conn._conn, "/redfish/v1/UpdateService/FirmwareInventory", redfish_version=conn.redfish_version)
inv = inv_coll.get_members()
out["inventory"] = [{"path": i.path, "version": i.version, "updateable": bool(i.updateable)} for i in inv]
target = [i.path for i in inv if "bios" in i.path.lower() or i.name in ("System ROM", "BIOS")]
if us is not None:
    mon = us.simple_update(image, targets=target[:1])
    out["monitor"] = mon.task_monitor_uri
    out["processing_at_start"] = mon.is_processing
    mon.wait(120)
    task = mon.get_task()
    out["task"] = {"state": str(task.task_state), "percent": task.percent_complete}
    for i in inv:
        if i.path == target[0]:
            i.refresh()
            out["version_after"] = i.version

# A multipart push where sushy cannot read the update service: sushy's
# TaskMonitor.from_response prefers the 202 body's @odata.id (bmcweb sends
# the Task) to Location, so it polls the Task, which answers 200.
push = conn.json.get("UpdateService") and conn._conn.get(
    "/redfish/v1/UpdateService").json().get("MultipartHttpPushUri")
if us is None and push:
    r = conn._conn._session.post(base + push, files={"UpdateFile": ("bmc-image.tar", b"\0" * 1024)},
                                 auth=(user, password), verify=False)
    mon = taskmonitor.TaskMonitor.from_response(conn._conn, r, push)
    out["push"] = {"status": r.status_code, "location": r.headers.get("Location"),
                   "sushy_polls": mon.task_monitor_uri,
                   "sushy_still_processing": mon.check_is_processing,
                   "monitor_status": conn._conn._session.get(base + r.headers.get("Location"),
                                                             auth=(user, password)).status_code}

# Storage: create a volume on the first controller that builds RAID1 or
# RAID0, read it, delete it.
out["volume"] = None
for st in system.storage.get_members():
    raids = [str(r) for c in st.storage_controllers for r in (c.raid_types or [])]
    try:
        vols = st.volumes
    except sushy.exceptions.MissingAttributeError:
        continue
    want = "RAID1" if any(r.endswith("RAID1") for r in raids) and len(st.drives) >= 2 else "RAID0"
    if not any(r.endswith(want) for r in raids):
        continue
    drives = [{"@odata.id": d.path} for d in st.drives[:2 if want == "RAID1" else 1]]
    at = None
    oats = vols.operation_apply_time_support
    if oats and oats.supported_values:
        at = sushy.ApplyTime.IMMEDIATE
    vol = vols.create({"RAIDType": want, "Name": "sushy", "Links": {"Drives": drives}}, apply_time=at)
    vols.refresh()
    out["volume"] = {"path": vol.path, "raid": str(vol.raid_type), "capacity": vol.capacity_bytes,
                     "members": len(vols.get_members())}
    vol.delete(apply_time=at)
    # A fresh collection: refreshing vols would refresh its cached member,
    # now gone (404).
    fresh = vols.__class__(conn._conn, vols.path, redfish_version=vols.redfish_version)
    out["volume"]["members_after_delete"] = len(fresh.members_identities)
    break

print(json.dumps(out))
