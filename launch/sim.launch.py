"""Start the simulation node: ``ros2 launch sim_node sim.launch.py [argument:=value ...]``.

Arguments (each sets the node parameter of the same name, DESIGN.md §6, except use_sim_time):

    world             world YAML or URDF path ('': the embedded default world)
    real_time_factor  target sim time / wall time (0: as fast as possible); changeable at run
                      time (``ros2 param set /sim real_time_factor 2.0``)
    physics_dt        physics step [s] (0: the world file's)
    lockstep          true: step k+1 waits until the command topics delivered the commands of
                      step k (timeout: the node's lockstep_timeout)
    record            rosbag2 directory to record into ('': no recording)
    viewer            true: the node serves the live web viewer (README "Viewer on a node")
    viewer_port       its HTTP port (8080; 0: any free port; a port in use: the node runs
                      without the viewer and says why)
    viewer_host       the address it serves on (127.0.0.1: this machine only; 0.0.0.0: every
                      interface)
    viewer_rate       frames a second it draws at most (15; in (0, 30])
    use_sim_time      true (default): the other nodes of this launch, and those a launch file
                      including this one starts after it, run on the simulation's /clock

``use_sim_time`` is a launch-wide ROS parameter (``SetParameter``), so a launch file that
includes this one and then starts its controllers, robot_state_publisher or rviz gets them on
sim time without repeating it per node; wrap the include in a ``GroupAction`` to keep it in.
The simulation node itself is the clock's source: it stamps every message with sim time
explicitly and keeps use_sim_time false (on sim time it would subscribe to its own /clock, one
callback per physics step, for nothing).

Every other parameter of the node (rates, tf_links, lockstep_topics, default_plugins, ...)
keeps its default here; run ``sim_node --ros-args -p name:=value`` for those.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node, SetParameter
from launch_ros.parameter_descriptions import ParameterValue

# node parameter: (its type, the default = the node's own default, description)
NODE_ARGUMENTS = {
    "world": (str, "", "world YAML or URDF path ('': the embedded default world)"),
    "real_time_factor": (float, "1.0", "target sim time / wall time (0: as fast as possible)"),
    "physics_dt": (float, "0.0", "physics step [s] (0: the world file's)"),
    "lockstep": (bool, "false", "step k+1 waits for the command topics of step k"),
    "record": (str, "", "rosbag2 directory to record into ('': no recording)"),
    "viewer": (bool, "false", "serve the live web viewer from the node (its URL is logged)"),
    "viewer_port": (int, "8080", "HTTP port of the viewer (0: any free port)"),
    "viewer_host": (str, "127.0.0.1", "address the viewer serves on (0.0.0.0: every "
                    "interface)"),
    "viewer_rate": (float, "15.0", "frames a second the viewer draws at most, in (0, 30]"),
}
USE_SIM_TIME = ("true", "the other nodes of this launch run on the simulation's /clock")


def generate_launch_description() -> LaunchDescription:
    arguments = [DeclareLaunchArgument(name, default_value=default, description=description)
                 for name, (_, default, description) in NODE_ARGUMENTS.items()]
    arguments.append(DeclareLaunchArgument("use_sim_time", default_value=USE_SIM_TIME[0],
                                           description=USE_SIM_TIME[1]))
    # typed: `real_time_factor:=1` must reach the node as the double 1.0, `world:=` as ''
    parameters = {name: ParameterValue(LaunchConfiguration(name), value_type=value_type)
                  for name, (value_type, _, _) in NODE_ARGUMENTS.items()}
    simulation = Node(package="sim_node", executable="sim_node", name="sim", output="screen",
                      parameters=[parameters, {"use_sim_time": False}])
    return LaunchDescription([
        *arguments,
        SetParameter(name="use_sim_time", value=LaunchConfiguration("use_sim_time")),
        simulation,
    ])
