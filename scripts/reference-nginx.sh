# Sourced by the benchmarks that compare TaxiCore's /hello with nginx's (bench-accuracy.sh,
# bench-hello.sh): the one reference nginx they both run, so their figures stay comparable.
#   reference_nginx_conf DIR PORT   writes DIR/nginx.conf (and DIR/logs/) for `nginx -p DIR -c DIR/nginx.conf`:
#   one worker in the foreground, no access log, keep-alive without a request limit, /hello
#   answered with "Hello World\n" and /status (stub_status: requests served) on 127.0.0.1:PORT.
reference_nginx_conf() {
  local dir=$1 port=$2
  mkdir -p "$dir/logs"
  cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port backlog=4096;
    location /hello { default_type text/plain; return 200 "Hello World\n"; }
    location = /status { stub_status; }
  }
}
CONF
}
