-- kv-router's routing view functions. Loaded (FUNCTION LOAD REPLACE) by the view sink when it
-- starts; the layout is documented in redis-sink/README.md. The build joins this directory's files
-- in name order, one per stage of a pick, behind the contract's Lua head (LAYOUT, KEY, RES_KEY,
-- META_DEFAULT, ANSWER, REASON: generated from kvr-view.yaml) into the one library FUNCTION LOAD
-- takes (view-contract/src/build/GenerateViewContract.java; scripts/library.sh prints it).
-- The library's revision within its layout: one more at every change of what it answers or writes
-- (LibraryRevisionTest holds each revision's code hash). A job refuses to replace a library of a
-- later layout or revision than its own (ViewConnection.loadViewFunctions): an older job must not
-- silently downgrade the routing of every balancer.
local REVISION = @REVISION@

