-- Applies one decision or executed call to a session's facts, atomically:
-- replicas writing to one session never lose each other's updates. The
-- bounds are those of the in-process store (internal/audit/facts.go).
--
-- KEYS[1] the facts (JSON), KEYS[2] the ids already applied.
-- ARGV[1] "deny" or "count"; ARGV[2] the id that makes the update apply
-- once; ARGV[3] the session's TTL in ms; ARGV[4] the call's family;
-- ARGV[5] its time in ns (a string: Lua numbers are doubles);
-- ARGV[6] "1" when the paths read are secrets; ARGV[7] how many paths
-- read follow; then the paths; then how many paths written follow, then
-- those; then the hosts.
-- Returns how many entries the bounds pushed out, or -1 when the update
-- was applied already.
local maxItems, maxFamilies, maxIds = 64, 64, 1024
local ttl = tonumber(ARGV[3])

if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then
  redis.call('PEXPIRE', KEYS[2], ttl)
  return -1
end
local evicted = 0
if redis.call('SCARD', KEYS[2]) > maxIds then
  redis.call('SPOP', KEYS[2], maxIds / 2)
  evicted = evicted + maxIds / 2
end
redis.call('PEXPIRE', KEYS[2], ttl)

local raw = redis.call('GET', KEYS[1])
local f = {}
if raw then f = cjson.decode(raw) end
if type(f.calls) ~= 'table' then f.calls = {} end
f.denied = f.denied or 0

-- list returns the named list, created empty when absent.
local function list(name)
  if type(f[name]) ~= 'table' then f[name] = {} end
  return f[name]
end

-- push appends v, dropping the oldest entries past maxItems.
local function push(l, v)
  table.insert(l, v)
  while #l > maxItems do
    table.remove(l, 1)
    evicted = evicted + 1
  end
end

-- add appends v unless it is there.
local function add(name, v)
  local l = list(name)
  for _, x in ipairs(l) do
    if x == v then return end
  end
  push(l, v)
end

if ARGV[1] == 'deny' then
  f.denied = f.denied + 1
else
  local family = ARGV[4]
  if f.calls[family] == nil then
    local n = 0
    for _ in pairs(f.calls) do n = n + 1 end
    if n >= maxFamilies then
      family = 'other'
      evicted = evicted + 1
    end
  end
  f.calls[family] = (f.calls[family] or 0) + 1
  push(list('recent'), {f = family, t = ARGV[5]})
  local nreads = tonumber(ARGV[7])
  for i = 8, 7 + nreads do
    add('files_read', ARGV[i])
    if ARGV[6] == '1' then add('secret_paths', ARGV[i]) end
  end
  local nwrites = tonumber(ARGV[8 + nreads])
  for i = 9 + nreads, 8 + nreads + nwrites do
    add('files_written', ARGV[i])
  end
  for i = 9 + nreads + nwrites, #ARGV do
    add('hosts_fetched', ARGV[i])
  end
end

-- cjson writes an empty table as {}: leave empty lists out instead.
for _, name in ipairs({'recent', 'files_read', 'files_written', 'secret_paths', 'hosts_fetched'}) do
  if type(f[name]) == 'table' and #f[name] == 0 then f[name] = nil end
end
redis.call('SET', KEYS[1], cjson.encode(f), 'PX', ttl)
return evicted
