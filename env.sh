# Source this file in bash or zsh (`source env.sh`) to use the development environment from a
# shell: the venv's python/pytest on PATH, and the variables that tools other than the venv's
# python need (cmake/colcon builds, non-Python processes). The venv's python itself needs none
# of this: its startup hook (tools/ros_env_hook.py) sets up the same paths. PYTHONPATH is not
# needed for the same reason. Run ./dev setup first.
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
_sim_node_prepend PATH "$VIRTUAL_ENV/bin"
_sim_node_prepend AMENT_PREFIX_PATH "$VIRTUAL_ENV"
_sim_node_prepend AMENT_PREFIX_PATH "$VIRTUAL_ENV/ros/install"
_sim_node_prepend CMAKE_PREFIX_PATH "$VIRTUAL_ENV"
_sim_node_prepend CMAKE_PREFIX_PATH "$VIRTUAL_ENV/ros/install"
_sim_node_prepend LD_LIBRARY_PATH "$VIRTUAL_ENV/ros/install/lib"
# Keep DDS discovery on this machine unless the user chose otherwise.
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
unset -f _sim_node_prepend
unset _sim_node_root
