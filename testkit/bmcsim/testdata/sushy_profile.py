"""Drive one bmcsim BMC of any profile with Debian's python3-sushy (4.3.3)
the way Ironic's redfish driver does: SessionOrBasicAuth (redfish_auth_type
auto), the system by its path (redfish_system_id), power ForceOff / On,
one-time boot from Cd, then virtual media as Ironic's
redfish-virtual-media boot finds it: through the system's managers
(Links.ManagedBy). sushy 4.3.3 has no System.virtual_media; where the
device lives under the system, sushy's own VirtualMedia class is pointed
at the system's VirtualMedia collection directly, to show what sushy's
media code can drive (actions, or PATCH when GET allows it).

Usage: /usr/bin/python3 sushy_profile.py BASE_URL USER PASSWORD IMAGE_URL SYSTEM_PATH...
Prints one JSON object; exits non-zero on any failure.
"""
import json
import sys

import sushy
from sushy import auth as sushy_auth
from sushy.resources.manager import virtual_media as sushy_vm

base, user, password, image = sys.argv[1:5]
system_paths = sys.argv[5:]
out = {"systems": []}

conn = sushy.Sushy(base + "/redfish/v1",
                   auth=sushy_auth.SessionOrBasicAuth(username=user, password=password),
                   verify=False)


def takes_cd(vm):
    return any(str(t).upper().endswith(("CD", "DVD")) for t in vm.media_types)


def drive(vm, iso):
    """Insert then eject as Ironic does; returns what was read back."""
    res = {"path": vm.path}
    if vm.inserted:
        vm.eject_media()
        vm.refresh()
    vm.insert_media(iso, inserted=True, write_protected=True)
    vm.refresh()
    res["after_insert"] = [vm.image, bool(vm.inserted)]
    vm.eject_media()
    vm.refresh()
    res["after_eject"] = [vm.image, bool(vm.inserted)]
    return res


for path in system_paths:
    s = {"path": path}
    system = conn.get_system(path)
    s["id"] = system.identity

    system.reset_system(sushy.RESET_FORCE_OFF)
    system.refresh()
    s["after_off"] = str(system.power_state)

    system.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_CD,
                                   enabled=sushy.BOOT_SOURCE_ENABLED_ONCE)
    system.refresh()
    s["boot"] = [str(system.boot.target), str(system.boot.enabled)]

    system.reset_system(sushy.RESET_ON)
    system.refresh()
    s["after_on"] = str(system.power_state)

    iso = image + "/" + system.identity + ".iso"
    s["media_via"] = "none"
    s["manager_errors"] = []
    for manager in system.managers:
        try:
            members = manager.virtual_media.get_members()
        except sushy.exceptions.SushyError as e:
            s["manager_errors"].append("%s: %s" % (manager.path, type(e).__name__))
            continue
        for vm in members:
            if takes_cd(vm):
                s["media"] = drive(vm, iso)
                s["media_via"] = "managers"
                break
        if s["media_via"] != "none":
            break
    s["system_has_virtual_media_attr"] = hasattr(system, "virtual_media")
    raw_vm = system.json.get("VirtualMedia", {}).get("@odata.id")
    if s["media_via"] == "none" and raw_vm:
        coll = sushy_vm.VirtualMediaCollection(conn._conn, raw_vm,
                                               redfish_version=system.redfish_version,
                                               registries=system.registries, root=conn)
        for vm in coll.get_members():
            if takes_cd(vm):
                s["media"] = drive(vm, iso)
                s["media_via"] = "system-direct"
                break
    out["systems"].append(s)

# Which authentication sushy ended up with.
out["session"] = bool(conn._auth.get_session_key())

# Wrong password must be refused (session, then the Basic fallback).
try:
    bad = sushy.Sushy(base + "/redfish/v1",
                      auth=sushy_auth.SessionOrBasicAuth(username=user, password=password + "-wrong"),
                      verify=False)
    bad.get_system(system_paths[0])
    out["wrong_password"] = "accepted"
except sushy.exceptions.AccessError:
    out["wrong_password"] = "refused"
except Exception as e:  # report, the Go test decides
    out["wrong_password"] = "error: %s" % type(e).__name__

print(json.dumps(out))
