#!/usr/bin/env bash
# Generates the certificates the TLS tests use into DIR with the openssl CLI (P-256 keys):
#   ca.pem/.key             the test CA (client CA, and the CA clients trust for the gateway)
#   server.pem/.key         localhost, 127.0.0.1; signed by ca ("server2" the same, reissued)
#   dual.pem/.key           like server, also good for client authentication (etcd)
#   wronghost.pem/.key      elsewhere.example only; signed by ca (hostname mismatch)
#   client.pem/.key         CN=writer-1, SAN DNS writer-1.example, URI spiffe://example/writer-1
#   operator.pem/.key       CN=ops-1, SAN DNS ops-1.example (an admin principal's certificate)
#   expired_client.pem/.key signed by ca, valid only in 2020
#   other_ca.pem/.key, other_client.pem/.key  an unrelated CA and a client it signed
# Usage: make_test_certs.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }

ca() {  # ca NAME CN
  key "$1"
  openssl req -x509 -new -key "$1.key" -subj "/CN=$2/O=fencegate tests" -days 30 \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -out "$1.pem"
}

leaf() {  # leaf NAME CA SUBJECT SAN USAGE
  key "$1"
  openssl req -new -key "$1.key" -subj "$3" -out "$1.csr"
  printf 'subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n' "$4" "$5" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 30 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

ca ca "fencegate test CA"
ca other_ca "unrelated CA"
leaf server ca "/CN=localhost" "DNS:localhost,IP:127.0.0.1" serverAuth
leaf server2 ca "/CN=localhost-reissued" "DNS:localhost,IP:127.0.0.1" serverAuth
# etcd's own gRPC gateway connects back to it presenting this certificate, so with
# --client-cert-auth it must be good for client authentication too.
leaf dual ca "/CN=localhost-dual" "DNS:localhost,IP:127.0.0.1" serverAuth,clientAuth
leaf wronghost ca "/CN=elsewhere.example" "DNS:elsewhere.example" serverAuth
leaf client ca "/CN=writer-1/O=example" "DNS:writer-1.example,URI:spiffe://example/writer-1" \
  clientAuth
leaf operator ca "/CN=ops-1/O=example" "DNS:ops-1.example" clientAuth
leaf other_client other_ca "/CN=intruder" "DNS:intruder.example" clientAuth

# `openssl x509` cannot backdate; `openssl ca` can, with a throwaway database.
key expired_client
openssl req -new -key expired_client.key -subj "/CN=expired-writer" -out expired_client.csr
mkdir -p ca_db
: >ca_db/index.txt
cat >ca_db/ca.cnf <<CNF
[ca]
default_ca = test
[test]
database = ca_db/index.txt
new_certs_dir = ca_db
serial = ca_db/serial
default_md = sha256
policy = any
copy_extensions = none
x509_extensions = client
[any]
commonName = supplied
[client]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
CNF
echo 1000 >ca_db/serial
openssl ca -batch -config ca_db/ca.cnf -cert ca.pem -keyfile ca.key -in expired_client.csr \
  -startdate 20200101000000Z -enddate 20200201000000Z -out expired_client.pem 2>/dev/null
rm -rf ca_db expired_client.csr
