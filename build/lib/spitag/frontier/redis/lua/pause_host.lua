-- ARGV: prefix, host, seconds. The host asked for a pause (Retry-After).
--! uses: common rank fn_host fn_pause
local t = now()
pause(ARGV[2], t, t + tonumber(ARGV[3]))
return 0
