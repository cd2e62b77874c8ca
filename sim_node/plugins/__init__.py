"""The built-in sensor and actuator emulators (DESIGN.md §5), registered as entry points of
sim_node.sensors / sim_node.actuators (setup.cfg) and named in world files by those names:

    name                   group       module
    joint_state_publisher  sensors     joint_state_publisher   <ns>/joint_states
    joint_commands         actuators   joint_commands          <ns>/joint_commands, ...
    joint_trajectory       actuators   joint_trajectory        <ns>/joint_trajectory
    imu                    sensors     imu                     <ns>/imu
    contact_sensor         sensors     contact_sensor          <ns>/bumper (+ /pressed)
    force_torque           sensors     force_torque            <ns>/wrench
    diff_drive             both        diff_drive              <ns>/cmd_vel -> <ns>/odom, /tf
    lidar                  sensors     lidar                   <ns>/scan or <ns>/points
    camera                 sensors     camera                  <ns>/<name>/image_raw, ...

sensor_messages packs numpy arrays into the sensor_msgs messages of lidar and camera.
Each module's docstring gives its messages, frames, units and config keys. Robot plugins publish
and subscribe under the robot's namespace (sim_node.plugins.common.topic_name). All of them
also run without ROS (a plain SimpleSimulator): sensors then only return readings, actuators
take messages through their callbacks.
"""
