-- POST /v1/tools/echo/call with a small argument object.
wrk.method = "POST"
wrk.body   = '{"args":{"q":"hello"}}'
wrk.headers["Content-Type"] = "application/json"
