-- ARGV: prefix, host, seconds.
--! uses: common rank fn_host fn_down
set_down(ARGV[2], now() + tonumber(ARGV[3]))
return 0
