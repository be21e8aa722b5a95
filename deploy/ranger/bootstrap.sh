#!/bin/sh
# One-shot bootstrap of the docker-compose demo (docs/demo.md): waits for
# Ranger Admin, then creates through its public REST API the groups the
# demo policies name, the hive service "demo_hive" (service.json) and the
# policies in policies/*.json (the demo bundle examples/policies/hive.json,
# one policy per file). What already exists is left as it is, so the
# script can run again.
set -eu

: "${RANGER_URL:=http://ranger:6080}"
: "${RANGER_ADMIN_USER:=admin}"
: "${RANGER_ADMIN_PASSWORD:?set RANGER_ADMIN_PASSWORD}"
: "${SERVICE:=demo_hive}"
dir=$(cd "$(dirname "$0")" && pwd)
body=$(mktemp)

# call METHOD PATH [FILE]: prints the HTTP status; the body is in $body.
call() {
	if [ $# -ge 3 ]; then
		curl -sS -o "$body" -w '%{http_code}' -u "$RANGER_ADMIN_USER:$RANGER_ADMIN_PASSWORD" \
			-H 'Content-Type: application/json' -H 'Accept: application/json' \
			-X "$1" "$RANGER_URL$2" --data-binary "@$3" || echo 000
	else
		curl -sS -o "$body" -w '%{http_code}' -u "$RANGER_ADMIN_USER:$RANGER_ADMIN_PASSWORD" \
			-H 'Accept: application/json' -X "$1" "$RANGER_URL$2" || echo 000
	fi
}

echo "waiting for Ranger Admin at $RANGER_URL"
tries=0
until [ "$(call GET /service/public/v2/api/servicedef/name/hive)" = 200 ]; do
	tries=$((tries + 1))
	if [ "$tries" -ge 120 ]; then
		echo "Ranger Admin did not answer in 10 minutes" >&2
		exit 1
	fi
	sleep 5
done

for g in analysts compliance support; do
	printf '{"name": "%s", "description": "pgranger demo group"}\n' "$g" >"$body.group"
	code=$(call POST /service/xusers/secure/groups "$body.group")
	echo "group $g: HTTP $code"
done

code=$(call GET "/service/public/v2/api/service/name/$SERVICE")
if [ "$code" = 200 ]; then
	echo "service $SERVICE exists"
else
	code=$(call POST /service/public/v2/api/service "$dir/service.json")
	if [ "$code" != 200 ]; then
		echo "creating service $SERVICE: HTTP $code" >&2
		cat "$body" >&2
		exit 1
	fi
	echo "service $SERVICE created"
fi

for f in "$dir"/policies/*.json; do
	code=$(call POST /service/public/v2/api/policy "$f")
	if [ "$code" = 200 ]; then
		echo "policy $(basename "$f"): created"
	elif [ "$code" = 400 ] && grep -qi 'exists' "$body"; then
		echo "policy $(basename "$f"): exists"
	else
		echo "policy $(basename "$f"): HTTP $code" >&2
		cat "$body" >&2
		exit 1
	fi
done
echo "bootstrap done: pgranger downloads /service/plugins/secure/policies/download/$SERVICE"
