# One triangle after near-plane clipping and projection, ready to rasterize (render.pyx).
ctypedef struct ScreenTriangle:
    double x[3]              # pixel coordinates of the corners (pixel (i, j) centred at i+0.5, j+0.5)
    double y[3]
    double dx[3]             # edge k: corner k -> corner k+1 [px]
    double dy[3]
    double w0, wx, wy        # 1/z over the image: w0 + wx (px - x[0]) + wy (py - y[0]) [1/m]
    int x_lo, x_hi, y_lo, y_hi   # pixel bounds, inclusive; y_lo > y_hi marks an empty slot
    int top_left[3]          # edge k (corner k -> k+1) is a top or left edge: owns its pixel centres
    unsigned char rgb[3]
    int segment              # the instance's segmentation value
