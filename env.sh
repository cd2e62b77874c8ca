# Source this file in bash or zsh (`source env.sh`) to use the development environment from a
# shell, as `source install/setup.bash` is used after a colcon build: the venv's python/pytest on
# PATH, and the variables that programs other than the venv's python need:
#   AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH  the ament prefix .venv/ros/install (sim_node's
#       executable, launch files, data and interfaces; tf2_msgs, simulation_interfaces) and the
#       venv (the ROS 2 wheels): for ament_index lookups (ros2 run / launch / pkg) and cmake
#   PYTHONPATH       the prefix's site-packages (the generated interface code: sim_node.msg,
#       tf2_msgs, simulation_interfaces), then the venv's (the ROS 2 Python runtime that code
#       imports): another CPython 3.11 (e.g. a `ros2` built elsewhere) imports them
#   LD_LIBRARY_PATH  the prefix's libraries and the wheels' (what the wheels' bootstrapper adds
#       for the venv's python): their typesupport libraries load in that interpreter too
# The venv's python itself needs none of this: its startup hook (tools/ros_env_hook.py) sets up
# the same paths. Run ./dev setup first.
_sim_node_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"
_sim_node_prepend() {  # _sim_node_prepend VAR ENTRY: put ENTRY first in VAR unless present
  eval "_sim_node_value=\"\${$1:-}\""
  case ":$_sim_node_value:" in
    *":$2:"*) ;;
    *) eval "export $1=\"\$2\${_sim_node_value:+:\$_sim_node_value}\"" ;;
  esac
  unset _sim_node_value
}
export VIRTUAL_ENV="$_sim_node_root/.venv"
# the venv is CPython 3.11 (tools/bootstrap.py: the ROS 2 Kilted wheels are cp311 only)
_sim_node_site="$VIRTUAL_ENV/lib/python3.11/site-packages"
_sim_node_prefix="$VIRTUAL_ENV/ros/install"
_sim_node_prepend PATH "$VIRTUAL_ENV/bin"
_sim_node_prepend AMENT_PREFIX_PATH "$VIRTUAL_ENV"
_sim_node_prepend AMENT_PREFIX_PATH "$_sim_node_prefix"
_sim_node_prepend CMAKE_PREFIX_PATH "$VIRTUAL_ENV"
_sim_node_prepend CMAKE_PREFIX_PATH "$_sim_node_prefix"
_sim_node_prepend PYTHONPATH "$_sim_node_site"
_sim_node_prepend PYTHONPATH "$_sim_node_prefix/lib/python3.11/site-packages"
# (find, not a glob: an unmatched glob is an error in zsh)
while IFS= read -r _sim_node_libs; do
  [ -n "$_sim_node_libs" ] && _sim_node_prepend LD_LIBRARY_PATH "$_sim_node_libs"
done <<_SIM_NODE_LIBS_
$(find "$_sim_node_site" -maxdepth 1 -type d -name 'ros_*.libs' 2>/dev/null | sort -r)
_SIM_NODE_LIBS_
_sim_node_prepend LD_LIBRARY_PATH "$VIRTUAL_ENV/lib"
_sim_node_prepend LD_LIBRARY_PATH "$_sim_node_prefix/lib"
# Keep DDS discovery on this machine unless the user chose otherwise.
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
unset -f _sim_node_prepend
unset _sim_node_root _sim_node_site _sim_node_prefix _sim_node_libs
