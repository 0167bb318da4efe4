"""Drive one bmcsim BMC's EventService with Debian's python3-sushy (4.3.3)
as an Ironic-side client would: read the service, create a subscription
with a secret header, read it back (the header must not come back), submit
a test event, delete the subscription.

Usage: /usr/bin/python3 sushy_events.py BASE_URL USER PASSWORD DESTINATION SECRET
Prints one JSON object; exits non-zero on any failure.
"""
import json
import sys

import sushy
from sushy import auth as sushy_auth

base, user, password, dest, secret = sys.argv[1:6]
conn = sushy.Sushy(base + "/redfish/v1",
                   auth=sushy_auth.SessionOrBasicAuth(username=user, password=password),
                   verify=False)
es = conn.get_event_service()
out = {"enabled": es.service_enabled, "retry": es.delivery_retry_attempts,
       "types": sorted(str(t.value) for t in es.get_event_types_for_subscription())}
sub = es.subscriptions.create({
    "Destination": dest, "Context": "sushy-check", "Protocol": "Redfish",
    "HttpHeaders": [{"X-Rackfence-Secret": secret}],
})
out["id"] = sub.identity
out["context"] = sub.context
out["headers_read_back"] = sub.http_headers or []
out["members"] = len(es.subscriptions.get_members())
es.submit_test_event("t1", "2026-01-01T00:00:00Z", "Alert", "sushy test",
                     [], "Base.1.0.Success", "/redfish/v1/Systems/1", "OK")
sub.delete()
out["members_after_delete"] = len(es.subscriptions.get_members())
print(json.dumps(out))
