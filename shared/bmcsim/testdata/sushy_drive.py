"""Drive one bmcsim BMC with Debian's python3-sushy the way Ironic's redfish
driver does: session auth, the single system (no redfish_system_id), power
ForceOff / On, boot PXE once, virtual media through the system's manager.

Usage: /usr/bin/python3 sushy_drive.py BASE_URL USER PASSWORD IMAGE_URL
Prints one JSON object with what it saw; exits non-zero on any failure.
"""
import json
import sys

import sushy
from sushy import auth as sushy_auth

base, user, password, image = sys.argv[1:5]
out = {}

# Ironic: redfish_auth_type=auto -> SessionOrBasicAuth; session first.
conn = sushy.Sushy(base + "/redfish/v1",
                   auth=sushy_auth.SessionOrBasicAuth(username=user, password=password),
                   verify=False)
# Session auth must have been used (not the basic-auth fallback).
out["session"] = bool(conn._auth.get_session_key())

system = conn.get_system()  # exactly one member, no system id given
out["system"] = system.identity

system.reset_system(sushy.RESET_FORCE_OFF)
system.refresh()
out["after_off"] = str(system.power_state)

system.set_system_boot_options(sushy.BOOT_SOURCE_TARGET_PXE,
                               enabled=sushy.BOOT_SOURCE_ENABLED_ONCE)
system.refresh()
out["boot"] = [str(system.boot.target), str(system.boot.enabled)]

system.reset_system(sushy.RESET_ON)
system.refresh()
out["after_on"] = str(system.power_state)

# Virtual media as Ironic's redfish-virtual-media boot does: through the
# system's managers (Links.ManagedBy).
inserted = False
for manager in system.managers:
    for vm in manager.virtual_media.get_members():
        types = [str(t) for t in vm.media_types]
        if not any("CD" in t.upper() for t in types):
            continue
        if vm.inserted:
            vm.eject_media()
        vm.insert_media(image, inserted=True, write_protected=True)
        vm.refresh()
        out["media_after_insert"] = [vm.image, bool(vm.inserted)]
        vm.eject_media()
        vm.refresh()
        out["media_after_eject"] = [vm.image, bool(vm.inserted)]
        inserted = True
out["media_found"] = inserted

# Wrong password must be refused.
try:
    bad = sushy.Sushy(base + "/redfish/v1",
                      auth=sushy_auth.SessionAuth(username=user, password=password + "-wrong"),
                      verify=False)
    bad.get_system()
    out["wrong_password"] = "accepted"
except sushy.exceptions.AccessError:
    out["wrong_password"] = "refused"
except Exception as e:  # report, the Go test decides
    out["wrong_password"] = "error: %s" % type(e).__name__

print(json.dumps(out))
