// The source of adserver_test_pch (cmake/AdserverHelpers.cmake): the target exists to compile
// the tests' precompiled header once; this file gives the static library something to hold.
namespace adserver::test {
int PrecompiledHeaderAnchor() { return 0; }
}  // namespace adserver::test
