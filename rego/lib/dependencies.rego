package ahp.lib.paths

# installed_dependency(path) holds for a path below a folder where a
# package manager puts other projects' code: node_modules, PHP/Go/Ruby
# vendor, CocoaPods' Pods, Carthage and SwiftPM checkouts, Mix deps,
# CMake's _deps, bower and elm caches, a virtualenv's editable checkouts.
# A repository found there is a dependency's copy, which the package
# manager fetches again; it is not the workspace's own history.
installed_dependency(path) if regex.match(_dependency_dirs, path)

_dependency_dirs := `(^|/)(node_modules|bower_components|jspm_packages|vendor|Pods|Carthage/Checkouts|Carthage/Build|\.build/checkouts|\.swiftpm|deps|_deps|elm-stuff|\.?venv/src|site-packages)/[^/]`
