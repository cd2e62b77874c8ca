"""Services of the simulation node (DESIGN.md §6): our own real-time-factor services (the
simulation_interfaces standard and the rest arrive with their module)."""
from __future__ import annotations

import math

from sim_node.srv import GetRealTimeFactor, SetRealTimeFactor


def register_services(node):
    group = node.services_group

    def set_rtf(request, response):
        factor = request.real_time_factor
        if not (math.isfinite(factor) and factor >= 0.0):
            response.success = False
            response.message = f"real_time_factor must be a finite number >= 0, got {factor}"
            return response
        node.set_real_time_factor(factor)
        response.success, response.message = True, ""
        return response

    def get_rtf(request, response):
        response.target_real_time_factor = float(node.real_time_factor)
        response.measured_real_time_factor = float(node.measured_real_time_factor())
        return response

    node.create_service(SetRealTimeFactor, "~/set_real_time_factor", set_rtf,
                        callback_group=group)
    node.create_service(GetRealTimeFactor, "~/get_real_time_factor", get_rtf,
                        callback_group=group)
