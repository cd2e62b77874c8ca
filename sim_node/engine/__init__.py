"""The Cython physics engine. Nothing below this package imports rclpy."""
